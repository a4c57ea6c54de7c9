package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// integrationJSON is an integration as answers show it: never a credential.
type integrationJSON struct {
	ID         string  `json:"id"`
	Provider   string  `json:"provider"`
	Name       string  `json:"name"`
	AccountID  string  `json:"account_id"`
	Livemode   bool    `json:"livemode"`
	WebhookURL *string `json:"webhook_url"`
	CreatedAt  string  `json:"created_at"`
}

func toIntegrationJSON(v admin.IntegrationView) integrationJSON {
	i := v.Integration
	return integrationJSON{ID: i.ID, Provider: i.Provider, Name: i.Name, AccountID: i.AccountID, Livemode: i.Livemode,
		WebhookURL: v.WebhookURL, CreatedAt: licentia.FormatTime(i.CreatedAt)}
}

type mappingJSON struct {
	IntegrationID     string                     `json:"integration_id"`
	ProviderProductID string                     `json:"provider_product_id"`
	ProductID         string                     `json:"product_id"`
	LimitKind         licentia.LimitKind         `json:"limit_kind"`
	LimitCount        int64                      `json:"limit_count"`
	KeyValidDays      *int64                     `json:"key_valid_days"`
	OnRefund          licentia.OnRefund          `json:"on_refund"`
	OnSubscriptionEnd licentia.OnSubscriptionEnd `json:"on_subscription_end"`
	RenewalURL        *string                    `json:"renewal_url"`
	SendKeyMail       bool                       `json:"send_key_mail"`
	Features          []string                   `json:"features"`
	AddsTo            *string                    `json:"adds_to"`
	CreatedAt         string                     `json:"created_at"`
	UpdatedAt         string                     `json:"updated_at"`
}

func toMappingJSON(m *licentia.Mapping) mappingJSON {
	return mappingJSON{IntegrationID: m.IntegrationID, ProviderProductID: m.ProviderProductID, ProductID: m.ProductID,
		LimitKind: m.LimitKind, LimitCount: m.LimitCount, KeyValidDays: m.KeyValidDays, OnRefund: m.OnRefund,
		OnSubscriptionEnd: m.OnSubscriptionEnd, RenewalURL: m.RenewalURL, SendKeyMail: m.SendKeyMail,
		Features: append([]string{}, m.Features...), AddsTo: m.AddsTo, CreatedAt: licentia.FormatTime(m.CreatedAt), UpdatedAt: licentia.FormatTime(m.UpdatedAt)}
}

func (s *Server) listIntegrations(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	web.ReadQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	vs, err := s.admin.Integrations(r.Context(), callerOf(r).OrgID)
	if err != nil {
		return err
	}
	out := make([]integrationJSON, len(vs))
	for i, v := range vs {
		out[i] = toIntegrationJSON(v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"integrations": out})
	return nil
}

func (s *Server) listMappings(w http.ResponseWriter, r *http.Request) error {
	id, err := pathIDOnly(r)
	if err != nil {
		return err
	}
	ms, err := s.admin.Mappings(r.Context(), callerOf(r).OrgID, id)
	if err != nil {
		return err
	}
	out := make([]mappingJSON, len(ms))
	for i := range ms {
		out[i] = toMappingJSON(&ms[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"mappings": out})
	return nil
}

func (s *Server) putMapping(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	var in admin.PutMapping
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	c := callerOf(r)
	m, err := s.admin.PutMapping(r.Context(), c.Actor, c.OrgID, id, r.PathValue("providerProductId"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"mapping": toMappingJSON(m)})
	return nil
}

func (s *Server) deleteMapping(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	var in admin.DeleteMappingRequest
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	c := callerOf(r)
	if err := s.admin.DeleteMapping(r.Context(), c.Actor, c.OrgID, id, r.PathValue("providerProductId"), in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

type endpointJSON struct {
	ID             string               `json:"id"`
	URL            string               `json:"url"`
	EventTypes     []licentia.EventType `json:"event_types"`
	Description    string               `json:"description"`
	Enabled        bool                 `json:"enabled"`
	DisabledReason *string              `json:"disabled_reason"`
	CreatedAt      string               `json:"created_at"`
	UpdatedAt      string               `json:"updated_at"`
}

func toEndpointJSON(e *licentia.WebhookEndpoint) endpointJSON {
	return endpointJSON{ID: e.ID, URL: e.URL, EventTypes: e.EventTypes, Description: e.Description, Enabled: e.Enabled,
		DisabledReason: e.DisabledReason, CreatedAt: licentia.FormatTime(e.CreatedAt), UpdatedAt: licentia.FormatTime(e.UpdatedAt)}
}

type endpointAnswer struct {
	Endpoint endpointJSON `json:"webhook_endpoint"`
}

type endpointSecretAnswer struct {
	Endpoint endpointJSON `json:"webhook_endpoint"`
	Secret   string       `json:"secret"`
}

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	web.ReadQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	es, err := s.admin.WebhookEndpoints(r.Context(), callerOf(r).OrgID)
	if err != nil {
		return err
	}
	out := make([]endpointJSON, len(es))
	for i := range es {
		out[i] = toEndpointJSON(&es[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"webhook_endpoints": out})
	return nil
}

func (s *Server) addWebhook(w http.ResponseWriter, r *http.Request) error {
	var in admin.CreateWebhookEndpoint
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	c := callerOf(r)
	e, secret, err := s.admin.AddWebhookEndpoint(r.Context(), c.Actor, c.OrgID, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, endpointSecretAnswer{Endpoint: toEndpointJSON(e), Secret: secret.Reveal()})
	return nil
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := pathIDOnly(r)
	if err != nil {
		return err
	}
	e, err := s.admin.WebhookEndpoint(r.Context(), callerOf(r).OrgID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, endpointAnswer{Endpoint: toEndpointJSON(e)})
	return nil
}

func (s *Server) patchWebhook(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	var in admin.UpdateWebhookEndpoint
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	c := callerOf(r)
	e, err := s.admin.UpdateWebhookEndpoint(r.Context(), c.Actor, c.OrgID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, endpointAnswer{Endpoint: toEndpointJSON(e)})
	return nil
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := pathIDOnly(r)
	if err != nil {
		return err
	}
	c := callerOf(r)
	if err := s.admin.DeleteWebhookEndpoint(r.Context(), c.Actor, c.OrgID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	web.ReadQuery(r, &is)
	if _, err := web.ReadBody(r, &is); err != nil {
		return err
	}
	if err := is.Err(); err != nil {
		return err
	}
	c := callerOf(r)
	e, secret, err := s.admin.RotateWebhookSecret(r.Context(), c.Actor, c.OrgID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, endpointSecretAnswer{Endpoint: toEndpointJSON(e), Secret: secret.Reveal()})
	return nil
}

type deliveryJSON struct {
	ID             string                  `json:"id"`
	EventID        string                  `json:"event_id"`
	EventType      licentia.EventType      `json:"event_type"`
	Status         licentia.DeliveryStatus `json:"status"`
	Attempts       int                     `json:"attempts"`
	LastAttemptAt  *string                 `json:"last_attempt_at"`
	NextAttemptAt  *string                 `json:"next_attempt_at"`
	LastStatusCode *int                    `json:"last_status_code"`
	FailureReason  *string                 `json:"failure_reason"`
	CreatedAt      string                  `json:"created_at"`
}

func toDeliveryJSON(d *licentia.Delivery) deliveryJSON {
	return deliveryJSON{ID: d.ID, EventID: d.EventID, EventType: d.EventType, Status: d.Status, Attempts: d.Attempts,
		LastAttemptAt: licentia.FormatTimePtr(d.LastAttemptAt), NextAttemptAt: licentia.FormatTimePtr(d.NextAttemptAt),
		LastStatusCode: d.LastStatusCode, FailureReason: d.FailureReason, CreatedAt: licentia.FormatTime(d.CreatedAt)}
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	q := web.ReadQuery(r, &is, "cursor")
	var cursor *string
	if v, ok := q.Get("cursor"); ok {
		c, ok := licentia.ParseUUID(v)
		if !ok {
			is.Add("query.cursor", "is not a cursor of this endpoint's deliveries")
		}
		cursor = &c
	}
	if err := is.Err(); err != nil {
		return err
	}
	ds, next, err := s.admin.Deliveries(r.Context(), callerOf(r).OrgID, id, cursor)
	if err != nil {
		return err
	}
	out := make([]deliveryJSON, len(ds))
	for i := range ds {
		out[i] = toDeliveryJSON(&ds[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": out, "next_cursor": next})
	return nil
}

func (s *Server) retryDelivery(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	deliveryID := pathUUID(r, "deliveryId", &is)
	web.ReadQuery(r, &is)
	if _, err := web.ReadBody(r, &is); err != nil {
		return err
	}
	if err := is.Err(); err != nil {
		return err
	}
	c := callerOf(r)
	d, err := s.admin.RetryDelivery(r.Context(), c.Actor, c.OrgID, id, deliveryID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"delivery": toDeliveryJSON(d)})
	return nil
}

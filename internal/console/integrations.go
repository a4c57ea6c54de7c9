package console

import (
	"net/http"
	"strings"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
)

type integrationsPage struct {
	Integrations []admin.IntegrationView
	Providers    []providers.Name
	// Unavailable says why integrations cannot be used, when they cannot.
	Unavailable string
}

// integrations lists the connected integrations and offers the connect
// form to owners and admins.
func (s *Server) integrations(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showIntegrations(w, r, v, nil)
}

func (s *Server) showIntegrations(w http.ResponseWriter, r *http.Request, v *visit, p *problem) error {
	page := integrationsPage{Providers: providers.Names}
	is, err := s.admin.Integrations(r.Context(), v.orgID())
	switch {
	case licentia.ErrorCode(err) == licentia.CodeIntegrationsNotConfigured:
		page.Unavailable = err.(*licentia.Error).Message
	case err != nil:
		return err
	}
	page.Integrations = is
	return s.render(w, r, http.StatusOK, "integrations", &view{Title: "Integrations", Section: "integrations", Visit: v,
		Notice: notice(r), Data: page, problem: p})
}

// connectIntegration checks the provider key with the provider, then
// stores the integration and shows where its provider must send webhooks.
func (s *Server) connectIntegration(w http.ResponseWriter, r *http.Request, v *visit) error {
	in := admin.ConnectIntegration{
		Provider: strings.TrimSpace(r.PostForm.Get("provider")), Name: strings.TrimSpace(r.PostForm.Get("name")),
		APIKey:        providers.Secret(strings.TrimSpace(r.PostForm.Get("api_key"))),
		WebhookSecret: providers.Secret(strings.TrimSpace(r.PostForm.Get("webhook_secret"))),
	}
	iv, err := s.admin.ConnectIntegration(r.Context(), v.actor(), v.orgID(), in)
	if p := refusal("connect", r, err); p != nil {
		forgetSecrets(p, "api_key", "webhook_secret")
		return s.showIntegrations(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/integrations/"+iv.Integration.ID, "")
}

// forgetSecrets keeps secrets out of a form shown again.
func forgetSecrets(p *problem, fields ...string) {
	for _, f := range fields {
		p.Values.Del(f)
	}
}

type integrationPage struct {
	View     admin.IntegrationView
	Mappings []licentia.Mapping
	Products []*admin.ProductView
	// NewMapping is the form that adds a mapping; MappingForms are each
	// mapping's own.
	NewMapping   mappingForm
	MappingForms []mappingForm
	Provider     providerSection
}

// integration shows an integration, the webhook address to paste at its
// provider, and its mappings.
func (s *Server) integration(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showIntegration(w, r, v, nil)
}

func (s *Server) showIntegration(w http.ResponseWriter, r *http.Request, v *visit, p *problem) error {
	ctx := r.Context()
	is, err := s.admin.Integrations(ctx, v.orgID())
	if err != nil {
		return err
	}
	page := integrationPage{}
	found := false
	for _, iv := range is {
		if iv.Integration.ID == r.PathValue("id") {
			page.View, found = iv, true
		}
	}
	if !found {
		return licentia.Errorf(licentia.CodeIntegrationNotFound, "Integration not found.")
	}
	if page.Mappings, err = s.admin.Mappings(ctx, v.orgID(), page.View.Integration.ID); err != nil {
		return err
	}
	if page.Products, err = s.admin.Products(ctx, v.orgID()); err != nil {
		return err
	}
	if page.Provider, err = s.providerSection(ctx, v.orgID(), page.View.Integration); err != nil {
		return err
	}
	if page.NewMapping, page.MappingForms, err = s.mappingForms(ctx, v.orgID(), page.Mappings, page.Products, p); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "integration", &view{Title: page.View.Integration.Name, Section: "integrations", Visit: v,
		Notice: notice(r), Data: page, problem: p})
}

func (s *Server) setWebhookSecret(w http.ResponseWriter, r *http.Request, v *visit) error {
	secret := providers.Secret(strings.TrimSpace(r.PostForm.Get("webhook_secret")))
	_, err := s.admin.SetWebhookSecret(r.Context(), v.actor(), v.orgID(), r.PathValue("id"), secret)
	if p := refusal("secret", r, err); p != nil {
		forgetSecrets(p, "webhook_secret")
		return s.showIntegration(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/integrations/"+r.PathValue("id"), "secret-set")
}

func (s *Server) disconnectIntegration(w http.ResponseWriter, r *http.Request, v *visit) error {
	if err := s.admin.DisconnectIntegration(r.Context(), v.actor(), v.orgID(), r.PathValue("id")); err != nil {
		return err
	}
	return seeOther(w, r, "/console/integrations", "disconnected")
}

func (s *Server) deleteMapping(w http.ResponseWriter, r *http.Request, v *visit) error {
	err := s.admin.DeleteMapping(r.Context(), v.actor(), v.orgID(), r.PathValue("id"), r.PathValue("providerProductId"), admin.DeleteMappingRequest{})
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/integrations/"+r.PathValue("id"), "mapping-deleted")
}

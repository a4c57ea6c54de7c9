package console

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

type webhooksPage struct {
	// Unavailable says why webhooks cannot be used, and what to set, when
	// they cannot: the page answers with it, never a bare error.
	Unavailable string
	Endpoints   []licentia.WebhookEndpoint
	// Created is set on the answer that adds an endpoint, with its secret,
	// shown this once.
	Created *createdEndpoint
}

type createdEndpoint struct {
	Endpoint *licentia.WebhookEndpoint
	Secret   string
}

// webhooks lists the organization's webhook endpoints and offers the add
// form.
func (s *Server) webhooks(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showWebhooks(w, r, v, http.StatusOK, nil, nil)
}

func (s *Server) showWebhooks(w http.ResponseWriter, r *http.Request, v *visit, status int, created *createdEndpoint, p *problem) error {
	page := webhooksPage{Created: created}
	es, err := s.admin.WebhookEndpoints(r.Context(), v.orgID())
	switch {
	case licentia.ErrorCode(err) == licentia.CodeWebhooksNotConfigured:
		page.Unavailable = err.(*licentia.Error).Message
	case err != nil:
		return err
	}
	page.Endpoints = es
	return s.render(w, r, status, "webhooks", &view{Title: "Webhooks", Section: "webhooks", Visit: v, Notice: notice(r),
		Data: page, problem: p})
}

// addWebhook adds an endpoint; its signing secret is shown on the answer
// and never again.
func (s *Server) addWebhook(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.CreateWebhookEndpoint
	decodeForm(r.PostForm, &in)
	e, secret, err := s.admin.AddWebhookEndpoint(r.Context(), v.actor(), v.orgID(), in)
	if p := refusal("add", r, err); p != nil {
		return s.showWebhooks(w, r, v, http.StatusOK, nil, p)
	}
	if err != nil {
		return err
	}
	return s.showWebhooks(w, r, v, http.StatusCreated, &createdEndpoint{Endpoint: e, Secret: secret.Reveal()}, nil)
}

type webhookPage struct {
	Endpoint   *licentia.WebhookEndpoint
	Deliveries []licentia.Delivery
	// Bodies are the deliveries' request bodies, by event id.
	Bodies map[string]string
	// Next is the cursor of the next page of deliveries, or nil.
	Next *string
	// Secret is set on the answer that replaced the endpoint's secret.
	Secret string
}

// webhook shows an endpoint, its deliveries newest first a page at a time
// (?after=<delivery id>), and the forms that change it.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showWebhook(w, r, v, http.StatusOK, "", nil)
}

func (s *Server) showWebhook(w http.ResponseWriter, r *http.Request, v *visit, status int, secret string, p *problem) error {
	ctx := r.Context()
	e, err := s.admin.WebhookEndpoint(ctx, v.orgID(), r.PathValue("id"))
	if err != nil {
		return err
	}
	ds, next, err := s.admin.Deliveries(ctx, v.orgID(), e.ID, optional(r.URL.Query(), "after"))
	if err != nil {
		return err
	}
	bodies, err := s.admin.DeliveryBodies(ctx, ds)
	if err != nil {
		return err
	}
	return s.render(w, r, status, "webhook", &view{Title: "Webhook endpoint", Section: "webhooks", Visit: v, Notice: notice(r),
		Data: webhookPage{Endpoint: e, Deliveries: ds, Bodies: bodies, Next: next, Secret: secret}, problem: p})
}

// updateWebhook saves the edit form, which sends every field: an empty
// description clears it.
func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.UpdateWebhookEndpoint
	decodeForm(r.PostForm, &in)
	if in.Description == nil && r.PostForm.Has("description") {
		empty := ""
		in.Description = &empty
	}
	e, err := s.admin.UpdateWebhookEndpoint(r.Context(), v.actor(), v.orgID(), r.PathValue("id"), in)
	if p := refusal("edit", r, err); p != nil {
		return s.showWebhook(w, r, v, http.StatusOK, "", p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/webhooks/"+e.ID, "endpoint-updated")
}

// rotateWebhookSecret replaces the endpoint's secret, shown on the answer
// and never again; the old one still signs for a day.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, v *visit) error {
	_, secret, err := s.admin.RotateWebhookSecret(r.Context(), v.actor(), v.orgID(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.showWebhook(w, r, v, http.StatusOK, secret.Reveal(), nil)
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request, v *visit) error {
	if err := s.admin.DeleteWebhookEndpoint(r.Context(), v.actor(), v.orgID(), r.PathValue("id")); err != nil {
		return err
	}
	return seeOther(w, r, "/console/webhooks", "endpoint-deleted")
}

func (s *Server) retryDelivery(w http.ResponseWriter, r *http.Request, v *visit) error {
	_, err := s.admin.RetryDelivery(r.Context(), v.actor(), v.orgID(), r.PathValue("id"), r.PathValue("deliveryId"))
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/webhooks/"+r.PathValue("id"), "retried")
}

// sendTestEvent queues endpoint.test to the endpoint; its delivery shows
// at the top of the list once sent.
func (s *Server) sendTestEvent(w http.ResponseWriter, r *http.Request, v *visit) error {
	_, err := s.admin.SendTestEvent(r.Context(), v.actor(), v.orgID(), r.PathValue("id"))
	if p := refusal("test", r, err); p != nil {
		return s.showWebhook(w, r, v, http.StatusOK, "", p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/webhooks/"+r.PathValue("id"), "test-queued")
}

// failureNames say why a delivery attempt failed, as the maker reads it.
var failureNames = map[string]string{
	licentia.FailureAddressRefused:  "address refused (not a public address)",
	licentia.FailurePayloadTooLarge: "event too large to send",
	licentia.FailureTimeout:         "no answer within 5 seconds",
	licentia.FailureConnection:      "could not connect",
	licentia.FailureTLS:             "TLS failed",
	licentia.FailureStatus:          "answered with an error status",
	licentia.FailureRedirect:        "answered with a redirect, which is not followed",
	licentia.FailureEndpointOff:     "endpoint turned off",
}

func failureWords(reason string) string {
	if w, ok := failureNames[reason]; ok {
		return w
	}
	return reason
}

package httpapi

import (
	"errors"
	"io"
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/web"
)

// provider registers a payment provider's webhook route: no API key (the
// provider's signature is the credential) and no rate limit, since
// providers send in bursts and a refused event is only sent again later;
// the body limit still applies, 413 first.
func (s *Server) provider(pattern string, h handlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if !web.LimitBody(w, r) {
			s.writeError(w, r, web.ErrTooLarge)
			return
		}
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

type receivedAnswer struct {
	Received bool `json:"received"`
}

// providerWebhook hands the raw body to the operation: the signature covers
// its exact bytes, so it is not decoded here.
func (s *Server) providerWebhook(w http.ResponseWriter, r *http.Request) error {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return web.ErrTooLarge
		}
		return web.UnfinishedBody(err)
	}
	res, err := s.admin.HandleProviderWebhook(r.Context(), admin.ProviderWebhook{
		IntegrationID: r.PathValue("integration_id"), Header: r.Header, Body: raw})
	if err != nil {
		return err
	}
	// The event's type and what it did, never its ids, email or signature.
	s.log.InfoContext(r.Context(), "provider event", "request_id", requestID(r.Context()),
		"provider", res.Provider, "type", res.Type, "kind", res.Kind, "repeated", res.Repeated, "issued", res.Issued, "held", res.Held)
	writeJSON(w, http.StatusOK, receivedAnswer{Received: true})
	return nil
}

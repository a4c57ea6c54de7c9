package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/ratelimit"
)

// public registers an activation route: no API key; the public rate limit
// (per client address and route), then 413; the handler answers the rest
// in the contract's order.
func (s *Server) public(pattern string, h handlerFunc) {
	s.keyless(pattern, ratelimit.Public, func(r *http.Request) string { return "addr:" + s.clientAddr(r) + "|" + pattern }, h)
}

// keyless registers a route that takes no API key: rule, counted per
// subject, then 413; the handler answers the rest.
func (s *Server) keyless(pattern string, rule ratelimit.Rule, subject func(*http.Request) string, h handlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if !s.allow(w, r, rule, subject(r)) {
			return
		}
		if !limitBody(w, r) {
			s.writeError(w, r, errTooLarge)
			return
		}
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

type activatedAnswer struct {
	Activation events.Activation `json:"activation"`
	Verdict    string            `json:"verdict"`
}

func (s *Server) activate(w http.ResponseWriter, r *http.Request) error {
	var in activation.Activate
	if err := decode(r, nil, &in); err != nil {
		return err
	}
	res, err := s.activation.Activate(r.Context(), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	writeJSON(w, status, activatedAnswer{Activation: events.ActivationOf(res.Activation), Verdict: res.Verdict})
	return nil
}

func (s *Server) activationStatus(w http.ResponseWriter, r *http.Request) error {
	var in activation.Status
	if err := decode(r, nil, &in); err != nil {
		return err
	}
	verdict, err := s.activation.Status(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"verdict": verdict})
	return nil
}

func (s *Server) deactivate(w http.ResponseWriter, r *http.Request) error {
	var in activation.Deactivate
	if err := decode(r, nil, &in); err != nil {
		return err
	}
	changed, err := s.activation.Deactivate(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"changed": changed})
	return nil
}

package httpapi

import (
	"net/http"
	"strconv"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/web"
)

// public registers an activation route: no API key; the public rate limit
// (per client address and route), then 413; the handler answers the rest
// in the contract's order. Every answer is counted in the metrics as
// route's, by its result.
func (s *Server) public(pattern, route string, h handlerFunc) {
	s.keyless(pattern, ratelimit.Public, func(r *http.Request) string { return ratelimit.ClientSubject(s.clientAddr(r)) + "|" + pattern },
		func(err error) { s.metrics.Activation(route, result(err)) }, h)
}

// result is an activation route's result as the metrics count it: "ok",
// or the contract code it answered.
func result(err error) string {
	if err == nil {
		return metrics.ResultOK
	}
	return string(licentia.ErrorCode(err))
}

// keyless registers a route that takes no API key: rule, counted per
// subject, then 413; the handler answers the rest. answered, when set,
// learns how each request ended: nil for an answer the handler wrote, or
// the error answered.
func (s *Server) keyless(pattern string, rule ratelimit.Rule, subject func(*http.Request) string, answered func(error), h handlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		err := s.allow(w, r, rule, subject(r))
		if err == nil && !web.LimitBody(w, r) {
			err = web.ErrTooLarge
		}
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
		if answered != nil {
			answered(err)
		}
	})
}

type activatedAnswer struct {
	Activation events.Activation `json:"activation"`
	Verdict    string            `json:"verdict"`
	// Heartbeat is outside the signed verdict: it tells the SDK how often
	// to call the status route, and vouches for nothing.
	Heartbeat *int64 `json:"heartbeat_interval_seconds,omitempty"`
}

type statusAnswer struct {
	Verdict   string `json:"verdict"`
	Heartbeat *int64 `json:"heartbeat_interval_seconds,omitempty"`
}

// appendJSON appends the answer as encoding/json writes it, with the
// newline writeJSON adds, and reports false, appending nothing, for a
// verdict holding a character that encoding/json escapes. A verdict is
// base64url and dots, so the status route, the one a fleet calls most,
// skips the reflection and the escaping scan of json.Marshal.
func (a statusAnswer) appendJSON(b []byte) ([]byte, bool) {
	for i := range len(a.Verdict) {
		if c := a.Verdict[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return b, false
		}
	}
	b = append(b, `{"verdict":"`...)
	b = append(b, a.Verdict...)
	b = append(b, '"')
	if a.Heartbeat != nil {
		b = append(b, `,"heartbeat_interval_seconds":`...)
		b = strconv.AppendInt(b, *a.Heartbeat, 10)
	}
	return append(b, "}\n"...), true
}

// writeStatusAnswer writes a status check's answer as writeJSON would.
func writeStatusAnswer(w http.ResponseWriter, a statusAnswer) {
	b, ok := a.appendJSON(make([]byte, 0, len(a.Verdict)+64))
	if !ok {
		writeJSON(w, http.StatusOK, a)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

func (s *Server) activate(w http.ResponseWriter, r *http.Request) error {
	var in activation.Activate
	if err := web.Decode(r, nil, &in); err != nil {
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
	writeJSON(w, status, activatedAnswer{Activation: events.ActivationOf(res.Activation), Verdict: res.Verdict, Heartbeat: res.Heartbeat})
	return nil
}

// activateOffline answers an offline activation request file with the
// same answer as an activation, which the application imports.
func (s *Server) activateOffline(w http.ResponseWriter, r *http.Request) error {
	var in activation.OfflineActivate
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	res, err := s.activation.ActivateOffline(r.Context(), in)
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
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	res, err := s.activation.Status(r.Context(), in)
	if err != nil {
		return err
	}
	writeStatusAnswer(w, statusAnswer{Verdict: res.Verdict, Heartbeat: res.Heartbeat})
	return nil
}

func (s *Server) deactivate(w http.ResponseWriter, r *http.Request) error {
	var in activation.Deactivate
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	changed, err := s.activation.Deactivate(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"changed": changed})
	return nil
}

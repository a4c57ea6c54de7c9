package httpapi

import (
	"context"
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz answers 200 when the database answers and every optional
// dependency is well, and 503 service_unavailable otherwise, within
// readyTimeout: an orchestrator probing a frozen database gets an answer.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		return &licentia.Error{Code: licentia.CodeServiceUnavailable, Message: "The database does not answer.", Err: err}
	}
	if s.ready != nil {
		if err := s.ready(); err != nil {
			return &licentia.Error{Code: licentia.CodeServiceUnavailable, Message: err.Error(), Err: err}
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

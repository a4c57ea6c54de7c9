package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/licentia/licentia/internal/build"
	"github.com/licentia/licentia/internal/licentia"
)

// readyTimeout bounds /readyz's checks: a probe that waits longer than this
// for the database is as good as an answer that it is not ready.
const readyTimeout = time.Second

// health is the answer of /healthz.
type health struct {
	Status string      `json:"status"`
	Build  buildAnswer `json:"build"`
}

// buildAnswer is the build information in an answer: the same fields as
// `licentia version` prints.
type buildAnswer struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Go       string `json:"go"`
	Built    string `json:"built"`
	Modified bool   `json:"modified"`
}

func toBuildAnswer(b build.Info) buildAnswer {
	return buildAnswer{Version: b.Version, Commit: b.Commit, Go: b.Go, Built: b.Built, Modified: b.Modified}
}

// healthz answers 200 while the process runs, with the build it runs, so an
// operator sees which version each process behind a proxy is on.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, health{Status: "ok", Build: toBuildAnswer(s.build)})
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

package httpapi

import (
	"context"
	"net/http"
	"time"
)

// readyTimeout bounds /readyz's checks: a probe that waits longer than this
// for the database is as good as an answer that it is not ready.
const readyTimeout = time.Second

// withDeadline bounds each request's work by s.timeout. Every store call
// takes the request's context, so with the database frozen (a network
// partition, no reset) a request answers 500 internal_error, or 503 where
// the contract names a dependency, once the deadline passes, instead of
// holding its connection, and the client's, as long as the freeze lasts.
func (s *Server) withDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

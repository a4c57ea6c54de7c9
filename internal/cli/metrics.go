package cli

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/licentia/licentia/internal/metrics"
)

// newMetricsServer serves the Prometheus metrics on LICENTIA_METRICS_LISTEN,
// at GET /metrics and nowhere else.
func newMetricsServer(addr string, m *metrics.Metrics, log *slog.Logger) (*sideServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("LICENTIA_METRICS_LISTEN: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	log.Info("metrics listening", "addr", ln.Addr().String())
	return newSideServer("metrics server", ln, nosniff(mux), log), nil
}

// nosniff marks every answer of h, refusals included, as the type it
// declares: a browser pointed at the listener must not guess the text
// format into something it would run.
func nosniff(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

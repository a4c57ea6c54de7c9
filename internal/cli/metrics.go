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
	return newSideServer("metrics server", ln, mux, log), nil
}

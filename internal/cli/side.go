package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/metrics"
)

// sideServer is a server of its own beside the API, on another address:
// the profiler and the metrics. Neither is ever reachable through the
// API's address, and each stops with the service.
type sideServer struct {
	// name says which server it is in errors: "debug server", "metrics
	// server".
	name     string
	listener net.Listener
	http     *http.Server
}

func newSideServer(name string, ln net.Listener, h http.Handler, log *slog.Logger) *sideServer {
	return &sideServer{name: name, listener: ln, http: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}
}

// serve runs until stop is closed. A request in progress (a profile, a
// scrape) is cut short after a second: it is a diagnosis, not a request a
// client waits on.
func (d *sideServer) serve(stop <-chan struct{}) error {
	errc := make(chan error, 1)
	go func() { errc <- d.http.Serve(d.listener) }()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %w", d.name, err)
	case <-stop:
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := d.http.Shutdown(ctx); err != nil {
		d.http.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	return nil
}

// close releases the listener, when serve has not.
func (d *sideServer) close() error {
	if err := d.listener.Close(); !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// listenSide starts listening for the profiler and the metrics, each when
// configured, adding what it opens to closers.
func listenSide(cfg config.Config, m *metrics.Metrics, log *slog.Logger, closers *[]func() error) (debug, metricsSrv *sideServer, err error) {
	if cfg.DebugListen != "" {
		if debug, err = newDebugServer(cfg.DebugListen, log); err != nil {
			return nil, nil, err
		}
		*closers = append(*closers, debug.close)
	}
	if cfg.MetricsListen != "" {
		if metricsSrv, err = newMetricsServer(cfg.MetricsListen, m, log); err != nil {
			return nil, nil, err
		}
		*closers = append(*closers, metricsSrv.close)
	}
	return debug, metricsSrv, nil
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// debugServer serves the Go profiler on LICENTIA_DEBUG_LISTEN, which the
// configuration allows only on a loopback address. It is a server of its
// own, so the profiler is never reachable through the API's address.
type debugServer struct {
	listener net.Listener
	http     *http.Server
}

func newDebugServer(addr string, log *slog.Logger) (*debugServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	// The configuration refuses other addresses, but a name such as
	// localhost resolves through the system: check what was bound.
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("LICENTIA_DEBUG_LISTEN: %s is not a loopback address", ln.Addr())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	log.Warn("profiler listening: keep this address private", "addr", ln.Addr().String())
	return &debugServer{listener: ln, http: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}, nil
}

// serve runs until stop is closed. A profile in progress is cut short:
// it is a diagnosis, not a request a client waits on.
func (d *debugServer) serve(stop <-chan struct{}) error {
	errc := make(chan error, 1)
	go func() { errc <- d.http.Serve(d.listener) }()
	select {
	case err := <-errc:
		return fmt.Errorf("debug server: %w", err)
	case <-stop:
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := d.http.Shutdown(ctx); err != nil {
		d.http.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("debug server: %w", err)
	}
	return nil
}

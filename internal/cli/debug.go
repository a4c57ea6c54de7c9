package cli

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// newDebugServer serves the Go profiler on LICENTIA_DEBUG_LISTEN, which
// the configuration allows only on a loopback address.
func newDebugServer(addr string, log *slog.Logger) (*sideServer, error) {
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
	return newSideServer("debug server", ln, mux, log), nil
}

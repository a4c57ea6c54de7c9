package cli_test

import (
	"io"
	"net"
	"testing"

	"github.com/licentia/licentia/internal/cli"
)

// TestNewAppFailureCloses: a NewApp that fails after it started listening
// (here on the profiler's address) releases the API's address again.
func TestNewAppFailureCloses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	h := newHarness(t)
	h.vars["LICENTIA_LISTEN"] = addr
	h.vars["LICENTIA_DEBUG_LISTEN"] = "127.0.0.1:notaport"
	if _, err := cli.NewApp(t.Context(), h.env(io.Discard, io.Discard)); err == nil {
		t.Fatal("NewApp() with a bad profiler address error = nil, want one")
	}
	again, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s after a failed NewApp: %v, want the address free", addr, err)
	}
	again.Close()
}

package cli_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/cli"
	"github.com/licentia/licentia/internal/licentia"
)

// startApp runs the service of h on a free loopback port until the test
// ends and returns its port.
func startApp(t *testing.T, h *harness) string {
	t.Helper()
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
	app, err := cli.NewApp(t.Context(), h.env(&strings.Builder{}, &strings.Builder{}))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		app.Close()
	})
	_, port, _ := net.SplitHostPort(app.Addr())
	return port
}

// TestHealthcheck runs `licentia healthcheck` as a container's HEALTHCHECK
// does: against LICENTIA_LISTEN with a wildcard host, over loopback.
func TestHealthcheck(t *testing.T) {
	ready := newHarness(t)
	readyPort := startApp(t, ready)
	// A Redis that does not answer leaves the service alive but not ready.
	degraded := newHarness(t)
	degraded.vars["LICENTIA_REDIS_URL"] = "redis://127.0.0.1:1/0"
	degradedPort := startApp(t, degraded)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()

	for _, tt := range []struct {
		name     string
		listen   string
		args     []string
		wantCode licentia.Code // "" for exit 0
		want     string        // in stdout on success, in the message on failure
	}{
		{name: "ready", listen: "0.0.0.0:" + readyPort, want: `{"status":"ready"}`},
		{name: "alive", listen: "0.0.0.0:" + readyPort, args: []string{"--path", "/healthz"}, want: `"build":{"version":`},
		{name: "loopback address", listen: "127.0.0.1:" + readyPort, want: `{"status":"ready"}`},
		{name: "not ready", listen: "0.0.0.0:" + degradedPort, wantCode: licentia.CodeServiceUnavailable, want: "answered 503"},
		{name: "not ready but alive", listen: "0.0.0.0:" + degradedPort, args: []string{"--path", "/healthz"}, want: `{"status":"ok"`},
		{name: "nothing listening", listen: "0.0.0.0:" + closedPort, wantCode: licentia.CodeServiceUnavailable, want: "GET http://127.0.0.1:" + closedPort + "/readyz"},
		{name: "another path", listen: "0.0.0.0:" + readyPort, args: []string{"--path", "/v1/admin/organization"}, wantCode: licentia.CodeValidationFailed, want: "must be /readyz or /healthz"},
		{name: "no fixed port", listen: "0.0.0.0:0", wantCode: licentia.CodeValidationFailed, want: "with a fixed port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.vars["LICENTIA_LISTEN"] = tt.listen
			args := append([]string{"healthcheck"}, tt.args...)
			if tt.wantCode == "" {
				r := h.run(t, args...)
				if r.code != 0 || !strings.Contains(r.stdout, tt.want) {
					t.Errorf("licentia %s = exit %d, stdout %q, stderr %q; want exit 0 and %s", strings.Join(args, " "), r.code, r.stdout, r.stderr, tt.want)
				}
				return
			}
			e := h.fail(t, tt.wantCode, args...)
			if msg, _ := e["message"].(string); !strings.Contains(msg, tt.want) {
				t.Errorf("licentia %s message = %q, want it to contain %q", strings.Join(args, " "), msg, tt.want)
			}
		})
	}
}

package cli_test

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/licentia/licentia/internal/cli"
	"github.com/licentia/licentia/internal/mail"
)

// TestNewAppFailureCloses: a NewApp that fails after it started listening
// (here on the profiler's address) releases the API's address again.
func TestNewAppFailureCloses(t *testing.T) {
	for range portAttempts {
		addr := freeAddr(t)
		h := newHarness(t)
		h.vars["LICENTIA_LISTEN"] = addr
		h.vars["LICENTIA_DEBUG_LISTEN"] = "127.0.0.1:notaport"
		_, err := cli.NewApp(t.Context(), h.env(io.Discard, io.Discard))
		if portTakenMeanwhile(err, addr) {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "notaport") {
			t.Fatalf("NewApp() with a bad profiler address error = %v, want one naming it", err)
		}
		wantFree(t, addr)
		return
	}
	t.Fatalf("other programs took the picked ports %d times", portAttempts)
}

// TestNewAppMetricsFailureCloses: a NewApp that fails to listen on the
// metrics' address (taken) releases the API's and the profiler's
// addresses it had already bound.
func TestNewAppMetricsFailureCloses(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for range portAttempts {
		api, debug := freeAddr(t), freeAddr(t)
		h := newHarness(t)
		h.vars["LICENTIA_LISTEN"] = api
		h.vars["LICENTIA_DEBUG_LISTEN"] = debug
		h.vars["LICENTIA_METRICS_LISTEN"] = taken.Addr().String()
		_, err := cli.NewApp(t.Context(), h.env(io.Discard, io.Discard))
		if portTakenMeanwhile(err, api, debug) {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "LICENTIA_METRICS_LISTEN") {
			t.Fatalf("NewApp() with the metrics address taken error = %v, want one naming LICENTIA_METRICS_LISTEN", err)
		}
		wantFree(t, api)
		wantFree(t, debug)
		return
	}
	t.Fatalf("other programs took the picked ports %d times", portAttempts)
}

// portAttempts bounds how often a test picks new ports when another
// program (the other test packages run beside these) took one between
// freeAddr and NewApp's listen.
const portAttempts = 5

// freeAddr returns a loopback address whose port nothing listened on a
// moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// portTakenMeanwhile reports whether err is NewApp's failure to listen on
// one of addrs because something else holds it now.
func portTakenMeanwhile(err error, addrs ...string) bool {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return false
	}
	for _, addr := range addrs {
		if strings.Contains(err.Error(), "listen on "+addr+":") {
			return true
		}
	}
	return false
}

// wantFree fails unless addr can be listened on again.
func wantFree(t *testing.T, addr string) {
	t.Helper()
	again, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s after a failed NewApp: %v, want the address free", addr, err)
	}
	again.Close()
}

// TestNewAppSaysProviderAddresses: a payment provider's API pointed
// elsewhere (a test-only setting) is said loudly at start.
func TestNewAppSaysProviderAddresses(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
	vars := []string{"LICENTIA_STRIPE_API_URL", "LICENTIA_PADDLE_API_URL", "LICENTIA_LEMONSQUEEZY_API_URL"}
	for _, v := range vars {
		h.vars[v] = "http://127.0.0.1:9"
	}
	var stderr strings.Builder
	app, err := cli.NewApp(t.Context(), h.env(io.Discard, &stderr))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	app.Close()
	for _, v := range vars {
		if !strings.Contains(stderr.String(), "TEST ONLY: "+v) {
			t.Errorf("NewApp() log does not say %s is set:\n%s", v, stderr.String())
		}
	}
}

// TestNewAppMailSender: without LICENTIA_SMTP_URL mail goes to the outbox
// in the data directory, and the log says so; with it, to the SMTP server,
// whose password the log never shows.
func TestNewAppMailSender(t *testing.T) {
	t.Run("outbox", func(t *testing.T) {
		h := newHarness(t)
		h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
		var stderr strings.Builder
		app, err := cli.NewApp(t.Context(), h.env(io.Discard, &stderr))
		if err != nil {
			t.Fatalf("NewApp() error = %v", err)
		}
		defer app.Close()
		dir := filepath.Join(h.dir, "outbox")
		o, ok := app.Mail().(*mail.Outbox)
		if !ok || o.Dir() != dir {
			t.Fatalf("Mail() = %#v, want the outbox %s", app.Mail(), dir)
		}
		if want := "mail goes to the outbox " + dir + "; set LICENTIA_SMTP_URL to send it"; !strings.Contains(stderr.String(), want) {
			t.Errorf("NewApp() log does not say %q:\n%s", want, stderr.String())
		}
	})
	t.Run("smtp", func(t *testing.T) {
		h := newHarness(t)
		h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
		h.vars["LICENTIA_SMTP_URL"] = "smtp://licentia:s3cr3t@mail.example.com:587"
		h.vars["LICENTIA_MAIL_FROM"] = "licences@example.com"
		var stderr strings.Builder
		app, err := cli.NewApp(t.Context(), h.env(io.Discard, &stderr))
		if err != nil {
			t.Fatalf("NewApp() error = %v", err)
		}
		defer app.Close()
		if _, ok := app.Mail().(*mail.SMTP); !ok {
			t.Fatalf("Mail() = %#v, want the SMTP sender", app.Mail())
		}
		if log := stderr.String(); !strings.Contains(log, "mail goes to the SMTP server") || strings.Contains(log, "s3cr3t") {
			t.Errorf("NewApp() log does not name the SMTP server, or shows its password:\n%s", log)
		}
	})
}

// TestNewAppWarnsOfDefaultBaseURL: without LICENTIA_BASE_URL the start-up
// log warns that the listen address stands in for it, naming both; with
// it, nothing is said.
func TestNewAppWarnsOfDefaultBaseURL(t *testing.T) {
	for _, set := range []bool{false, true} {
		h := newHarness(t)
		h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
		if set {
			h.vars["LICENTIA_BASE_URL"] = "https://licences.example.com"
		}
		var stderr strings.Builder
		app, err := cli.NewApp(t.Context(), h.env(io.Discard, &stderr))
		if err != nil {
			t.Fatalf("NewApp() error = %v", err)
		}
		app.Close()
		warned := false
		for line := range strings.Lines(stderr.String()) {
			var entry struct {
				Level, Msg string
				BaseURL    string `json:"base_url"`
			}
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Level == "WARN" && strings.HasPrefix(entry.Msg, "LICENTIA_BASE_URL is unset") {
				warned = entry.BaseURL == "http://127.0.0.1:0" && strings.Contains(entry.Msg, "set LICENTIA_BASE_URL")
			}
		}
		if warned == set {
			t.Errorf("LICENTIA_BASE_URL set %v: warned %v, log:\n%s", set, warned, stderr.String())
		}
	}
}

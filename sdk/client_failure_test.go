package sdk_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/sdk"
)

// No network error, timeout, closed port, 5xx, 429 or 404 licence_not_found
// ever locks: the last verdict is kept and reported stale, even past its
// valid_until (decisions.md, Activation).
func TestFailuresKeepLastResult(t *testing.T) {
	for _, tt := range []struct {
		name      string
		intercept func(http.ResponseWriter, *http.Request) bool
		client    func(t *testing.T, fx *fixture) *sdk.Client // nil: the fixture's
	}{
		{name: "500 internal_error", intercept: errorAnswer(500, sdk.CodeInternalError, nil)},
		{name: "503 product_unavailable", intercept: errorAnswer(503, sdk.CodeProductUnavailable, nil)},
		{name: "502 page from a proxy", intercept: func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html>Bad Gateway</html>")
			return true
		}},
		{name: "429 rate_limited", intercept: errorAnswer(429, sdk.CodeRateLimited, map[string]string{"Retry-After-public": "30"})},
		{name: "429 without Retry-After-public", intercept: errorAnswer(429, sdk.CodeRateLimited, nil)},
		{name: "404 licence_not_found", intercept: errorAnswer(404, sdk.CodeLicenceNotFound, nil)},
		{name: "200 not JSON", intercept: func(w http.ResponseWriter, r *http.Request) bool {
			io.WriteString(w, "<html>captive portal</html>")
			return true
		}},
		{name: "200 without a verdict", intercept: func(w http.ResponseWriter, r *http.Request) bool {
			writeJSONAnswer(w, 200, map[string]any{"verdict": nil})
			return true
		}},
		{name: "closed port", client: func(t *testing.T, fx *fixture) *sdk.Client {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			l.Close()
			return newClient(t, fx.server, fx.path, func(c *sdk.Config) { c.BaseURL, c.HTTPClient = "http://"+addr, nil })
		}},
		{name: "timeout", client: func(t *testing.T, fx *fixture) *sdk.Client {
			fx.server.setIntercept(blockUntilGone(t))
			return newClient(t, fx.server, fx.path, func(c *sdk.Config) { c.HTTPClient = &http.Client{Timeout: 200 * time.Millisecond} })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fx := activated(t)
			last := fx.client.State().Verdict
			fx.server.setIntercept(tt.intercept)
			c := fx.client
			if tt.client != nil {
				c = tt.client(t, fx)
			}
			fx.clock.Advance(8 * 24 * time.Hour) // past the verdict's valid_until
			st, err := c.Check(t.Context())
			if err == nil {
				t.Fatal("Check() = nil error, want the failure")
			}
			wantKept(t, st, last)
			wantKept(t, c.State(), last)
			wantKept(t, newClient(t, fx.server, fx.path).State(), last) // and after a restart
		})
	}
}

// blockUntilGone answers nothing until the client gives up.
func blockUntilGone(t *testing.T) func(http.ResponseWriter, *http.Request) bool {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	return func(w http.ResponseWriter, r *http.Request) bool {
		select {
		case <-r.Context().Done():
		case <-done:
		}
		return true
	}
}

// After a 5xx, a timeout or a network error, no request goes out until an
// exponentially growing backoff with jitter has passed.
func TestBackoffAfterFailures(t *testing.T) {
	fx := activated(t)
	fx.server.setIntercept(errorAnswer(500, sdk.CodeInternalError, nil))
	fx.clock.Advance(sdk.CheckInterval)
	status := func() int { return fx.server.count("/v1/activations/status") }
	for i, wait := range []time.Duration{5 * time.Minute, 10 * time.Minute, 20 * time.Minute} {
		n := status()
		st, err := fx.client.Check(t.Context())
		if err == nil || status() != n+1 {
			t.Fatalf("failure %d: Check() = %v with %d requests, want one failed request", i+1, err, status()-n)
		}
		delay := st.NextCheckAt.Sub(fx.clock.Now())
		if delay < wait/2 || delay > wait {
			t.Errorf("failure %d: next check in %v, want between %v and %v", i+1, delay, wait/2, wait)
		}
		for _, c := range []*sdk.Client{fx.client, newClient(t, fx.server, fx.path)} {
			if _, err := c.Check(t.Context()); err != nil || status() != n+1 {
				t.Errorf("failure %d: Check() during the backoff = %v with %d requests, want none", i+1, err, status()-n-1)
			}
		}
		fx.clock.Advance(delay - time.Millisecond)
		_, _ = fx.client.Check(t.Context())
		if status() != n+1 {
			t.Errorf("failure %d: a request just before the backoff ended", i+1)
		}
		fx.clock.Advance(time.Millisecond)
	}
	fx.server.setIntercept(nil)
	st, err := fx.client.Check(t.Context())
	if err != nil {
		t.Fatalf("Check() after recovery = %v", err)
	}
	mustValid(t, st)
	if st.Stale || st.LastError != nil || !st.NextCheckAt.Equal(fx.clock.Now().Add(sdk.CheckInterval)) {
		t.Errorf("State() after recovery = %+v, want fresh, next check in a day", st)
	}
}

// A 429's Retry-After-public holds every request until it passes.
func TestRetryAfterHonoured(t *testing.T) {
	fx := activated(t)
	fx.server.setIntercept(errorAnswer(429, sdk.CodeRateLimited, map[string]string{"Retry-After-public": "120"}))
	fx.clock.Advance(sdk.CheckInterval)
	st, err := fx.client.Check(t.Context())
	if e, ok := errors.AsType[*sdk.Error](err); !ok || e.Status != 429 || e.RetryAfter != 120*time.Second {
		t.Fatalf("Check() = %v, want 429 with Retry-After 120 s", err)
	}
	if want := fx.clock.Now().Add(120 * time.Second); !st.NextCheckAt.Equal(want) {
		t.Errorf("State() NextCheckAt = %v, want %v", st.NextCheckAt, want)
	}
	fx.server.setIntercept(nil)
	fx.clock.Advance(119 * time.Second)
	if _, err := fx.client.Check(t.Context()); err != nil {
		t.Errorf("Check() while waiting = %v", err)
	}
	if _, err := fx.client.Activate(t.Context(), fx.server.key(t), fxMachineInfo); !errors.Is(err, sdk.ErrRetryLater) {
		t.Errorf("Activate() while waiting = %v, want ErrRetryLater", err)
	}
	if _, err := fx.client.Deactivate(t.Context()); !errors.Is(err, sdk.ErrRetryLater) {
		t.Errorf("Deactivate() while waiting = %v, want ErrRetryLater", err)
	}
	if n := fx.server.count(""); n != 2 {
		t.Errorf("requests while waiting = %d, want 2 (activation, the 429)", n)
	}
	fx.clock.Advance(time.Second)
	st, err = fx.client.Check(t.Context())
	if err != nil || fx.server.count("") != 3 {
		t.Fatalf("Check() after the wait = %v, requests %d, want one request", err, fx.server.count(""))
	}
	mustValid(t, st)
}

// Errors carry the envelope's code and request id, never the licence key.
func TestErrorsNeverCarryTheKey(t *testing.T) {
	fx := newFixture(t)
	key := fx.server.key(t)
	fx.server.setIntercept(errorAnswer(409, sdk.CodeSeatLimitReached, nil))
	_, err := fx.client.Activate(t.Context(), key, fxMachineInfo)
	e, ok := errors.AsType[*sdk.Error](err)
	if !ok || e.Code != sdk.CodeSeatLimitReached || e.RequestID != "req-1" {
		t.Fatalf("Activate() = %v, want seat_limit_reached with its request id", err)
	}
	body := key[strings.IndexByte(key, '_')+1:]
	for _, s := range []string{err.Error(), fx.client.State().LastError.Error()} {
		if strings.Contains(s, body[:20]) {
			t.Errorf("error %q carries the licence key", s)
		}
	}
}

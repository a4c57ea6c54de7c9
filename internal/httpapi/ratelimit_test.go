package httpapi_test

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// wantRateHeaders checks the X-RateLimit-*-admin headers of an answer.
func wantRateHeaders(t *testing.T, r *resp, remaining, reset string) {
	t.Helper()
	for name, want := range map[string]string{
		"X-RateLimit-Limit-admin":     "300",
		"X-RateLimit-Remaining-admin": remaining,
		"X-RateLimit-Reset-admin":     reset,
	} {
		if got := r.header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// wantRateLimited checks a 429: rate_limited, Retry-After-admin and never the
// plain Retry-After (send checks that on every answer).
func wantRateLimited(t *testing.T, e *testEnv, c call, retryAfter string) {
	t.Helper()
	r := e.run(t, scenario{call: c, wantStatus: http.StatusTooManyRequests, wantCode: licentia.CodeRateLimited})
	if got := r.header.Get("Retry-After-admin"); got != retryAfter {
		t.Errorf("Retry-After-admin = %q, want %q", got, retryAfter)
	}
	wantRateHeaders(t, r, "0", retryAfter)
}

// TestRateLimitPerKeyAndRoute: 300 requests a minute per key and route; the
// 301st answers 429, while another route or another key is still counted
// apart, and the window resets on the minute.
func TestRateLimitPerKeyAndRoute(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeOrganizationRead, licentia.ScopeMembersRead)
	org := call{method: "GET", path: "/v1/admin/organization", key: key}

	wantRateHeaders(t, e.run(t, scenario{call: org, wantStatus: http.StatusOK}), "299", "60")
	e.clock.Advance(15 * time.Second)
	wantRateHeaders(t, e.run(t, scenario{call: org, wantStatus: http.StatusOK}), "298", "45")
	e.repeat(t, 297, org, http.StatusOK)
	wantRateHeaders(t, e.run(t, scenario{call: org, wantStatus: http.StatusOK}), "0", "45")
	wantRateLimited(t, e, org, "45")

	t.Run("another route", func(t *testing.T) {
		r := e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/members", key: key}, wantStatus: http.StatusOK})
		wantRateHeaders(t, r, "299", "45")
	})
	t.Run("another key", func(t *testing.T) {
		other := e.key(t, e.org.ID, licentia.ScopeOrganizationRead)
		r := e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/organization", key: other}, wantStatus: http.StatusOK})
		wantRateHeaders(t, r, "299", "45")
	})
	t.Run("later in the window", func(t *testing.T) {
		e.clock.Advance(44*time.Second + 500*time.Millisecond)
		wantRateLimited(t, e, org, "1")
	})
	t.Run("next window", func(t *testing.T) {
		e.clock.Advance(500 * time.Millisecond)
		wantRateHeaders(t, e.run(t, scenario{call: org, wantStatus: http.StatusOK}), "299", "60")
	})
}

// TestRateLimitPerAddress: a missing or refused key is counted per client
// address and route, before the 401: the 301st such request answers 429.
func TestRateLimitPerAddress(t *testing.T) {
	e := newTestEnv(t)
	good, rec := e.newKey(t, e.org.ID, admin.NewAPIKey{Name: "good", Scopes: []licentia.Scope{licentia.ScopeOrganizationRead}})
	wrong := "licentia_" + rec.Prefix + "_" + strings.Repeat("W", 43)
	org := func(key string) call {
		return call{method: "GET", path: "/v1/admin/organization", key: key, invalid: key == ""}
	}

	e.repeat(t, 150, org(""), http.StatusUnauthorized)
	e.repeat(t, 149, org(wrong), http.StatusUnauthorized)
	r := e.run(t, scenario{call: org(""), wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized})
	wantRateHeaders(t, r, "0", "60")
	for _, tt := range []struct {
		name string
		call call
		want int
	}{
		{"missing key", org(""), http.StatusTooManyRequests},
		{"wrong key", org(wrong), http.StatusTooManyRequests},
		{"malformed key", org("x"), http.StatusTooManyRequests},
		{"good key is counted apart", org(good), http.StatusOK},
		{"another route is counted apart", call{method: "GET", path: "/v1/admin/members", invalid: true}, http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == http.StatusTooManyRequests {
				wantRateLimited(t, e, tt.call, "60")
				return
			}
			e.run(t, scenario{call: tt.call, wantStatus: tt.want})
		})
	}
	t.Run("next window", func(t *testing.T) {
		e.clock.Advance(time.Minute)
		e.run(t, scenario{call: org(""), wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized})
	})
}

// TestRateLimitTrustedProxies: behind a trusted proxy the client is read
// from X-Forwarded-For, right to left, skipping trusted hops; without
// trusted proxies the header is ignored and the TCP peer is the client.
func TestRateLimitTrustedProxies(t *testing.T) {
	xff := func(v string) call {
		c := call{method: "GET", path: "/v1/admin/organization", invalid: true}
		if v != "" {
			c.headers = map[string]string{"X-Forwarded-For": v}
		}
		return c
	}
	const client = "198.51.100.7"
	type xffCase struct {
		xff     string
		limited bool // counted with client, who has used up the window
	}
	for _, tt := range []struct {
		name    string
		proxies []netip.Prefix
		cases   []xffCase
	}{
		{
			name:    "trusted",
			proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			cases: []xffCase{
				{client, true},
				{"198.51.100.8", false},
				{"::ffff:" + client, true},
				{client + ", 127.0.0.9", true},
				{"203.0.113.50, " + client, true},
				{client + ", 203.0.113.50", false},
				{client + ", 127.0.0.2, 127.0.0.3", true},
				{"not-an-address, " + client, true},
				{client + ", not-an-address", false},
				{"", false},
			},
		},
		{
			name: "not trusted",
			cases: []xffCase{
				{client, true},
				{"198.51.100.8", true},
				{"", true},
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnvWith(t, envOptions{trustedProxies: tt.proxies})
			e.repeat(t, 300, xff(client), http.StatusUnauthorized)
			for _, c := range tt.cases {
				t.Run("X-Forwarded-For="+c.xff, func(t *testing.T) {
					if c.limited {
						wantRateLimited(t, e, xff(c.xff), "60")
						return
					}
					e.run(t, scenario{call: xff(c.xff), wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized})
				})
			}
		})
	}
}

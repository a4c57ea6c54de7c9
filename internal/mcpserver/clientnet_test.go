package mcpserver_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/mcpserver"
	"github.com/licentia/licentia/internal/ratelimit"
)

// TestRefusedCredentialsLimitedPerNetwork: refused credentials are counted
// per client address, and the addresses of one IPv6 /64 are one client.
func TestRefusedCredentialsLimitedPerNetwork(t *testing.T) {
	for _, en := range engines {
		t.Run(en.name, func(t *testing.T) {
			st, clk, log := en.open(t), clock.NewFake(start), slog.New(slog.DiscardHandler)
			limiter, authn := ratelimit.NewMemory(clk), auth.NewAuthenticator(st, clk)
			proxies := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
			api := httpapi.New(httpapi.Options{Store: st, Auth: authn, Limiter: limiter, Clock: clk, Logger: log, TrustedProxies: proxies})
			m, err := mcpserver.New(mcpserver.Options{API: api, Document: httpapi.OpenAPI, Auth: authn, Limiter: limiter, Clock: clk, Logger: log,
				BaseURL: baseURL, TrustedProxies: proxies})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(m)
			t.Cleanup(srv.Close)
			got := map[int]int{}
			for i := range 301 {
				req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL+mcpserver.Path, strings.NewReader(initialize))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer nonsense")
				req.Header.Set("X-Forwarded-For", fmt.Sprintf("2001:db8:1:2::%x", i+1))
				res, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				got[res.StatusCode]++
			}
			if got[http.StatusUnauthorized] != 300 || got[http.StatusTooManyRequests] != 1 {
				t.Errorf("301 refused credentials from one /64 answered %v, want 300 401s and one 429", got)
			}
		})
	}
}

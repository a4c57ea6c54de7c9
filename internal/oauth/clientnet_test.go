package oauth_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/oauth"
	"github.com/licentia/licentia/internal/ratelimit"
)

// TestRegisterLimitPerNetwork: the registration limit of 20 an hour per
// client address counts the addresses of one IPv6 /64 as one client; the
// next /64 is counted apart.
func TestRegisterLimitPerNetwork(t *testing.T) {
	for _, en := range engines {
		t.Run(en.name, func(t *testing.T) {
			clk := clock.NewFake(start)
			authz := oauth.New(oauth.Options{Store: en.open(t), Clock: clk, Limiter: ratelimit.NewMemory(clk),
				Logger: slog.New(slog.DiscardHandler), BaseURL: "https://licentia.example.org",
				TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
			srv := httptest.NewServer(authz.Handler())
			t.Cleanup(srv.Close)
			register := func(client string) int {
				t.Helper()
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/oauth/register",
					strings.NewReader(`{"redirect_uris":["`+redirectURI+`"],"token_endpoint_auth_method":"none"}`))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Forwarded-For", client)
				res, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res.StatusCode
			}
			got := map[int]int{}
			for i := range 21 {
				got[register(fmt.Sprintf("2001:db8:1:2::%x", i+1))]++
			}
			if got[http.StatusCreated] != 20 || got[http.StatusTooManyRequests] != 1 {
				t.Errorf("21 registrations from one /64 answered %v, want 20 registered and 1 refused (429)", got)
			}
			if status := register("2001:db8:1:3::1"); status != http.StatusCreated {
				t.Errorf("a registration from the next /64 answered %d, want 201", status)
			}
		})
	}
}

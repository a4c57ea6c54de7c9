package httpapi_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"
)

// bothEngines runs test on SQLite and on PostgreSQL (skipped without
// LICENTIA_TEST_POSTGRES_URL).
func bothEngines(t *testing.T, test func(t *testing.T, o envOptions)) {
	for _, postgres := range []bool{false, true} {
		name := "sqlite"
		if postgres {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { test(t, envOptions{postgres: postgres}) })
	}
}

// inNetwork is the i-th address of the IPv6 /64 2001:db8:1:2::/64, spread
// over its interface identifier as a subscriber's devices are.
func inNetwork(i int) string {
	return fmt.Sprintf("2001:db8:1:2:%x:%x::%x", (i*7919)%0x10000, i, i+1)
}

// statuses sends c from each client address and counts the answers by
// status.
func (e *testEnv) statuses(t *testing.T, c call, clients []string) map[int]int {
	t.Helper()
	got := map[int]int{}
	for _, client := range clients {
		c.headers = map[string]string{"X-Forwarded-For": client}
		got[e.send(t, c).status]++
	}
	return got
}

func addresses(n int, addr func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = addr(i)
	}
	return out
}

// TestLookupLimitPerNetwork: 40 addresses of one IPv6 /64 are one client
// to the lookup limit and get 5 lookups among them; another /64 is
// counted apart, IPv4 addresses each alone, and an IPv4 address written
// as IPv6 as that IPv4 address.
func TestLookupLimitPerNetwork(t *testing.T) {
	bothEngines(t, func(t *testing.T, o envOptions) {
		e := newLookupEnv(t, o)
		get := lookupGet("buyer@example.com", "pi_1", "")
		got := e.statuses(t, get, addresses(40, inNetwork))
		if got[http.StatusNotFound] != 5 || got[http.StatusTooManyRequests] != 35 {
			t.Errorf("40 lookups from one /64 answered %v, want 5 lookups (404) and 35 refusals (429)", got)
		}
		if got := e.statuses(t, get, []string{"2001:db8:1:3::1"}); got[http.StatusNotFound] != 1 {
			t.Errorf("a lookup from the next /64 answered %v, want 404", got)
		}
		ipv4 := addresses(10, func(i int) string { return fmt.Sprintf("198.51.100.%d", i+1) })
		if got := e.statuses(t, get, ipv4); got[http.StatusNotFound] != 10 {
			t.Errorf("10 lookups from 10 IPv4 addresses answered %v, want 10 lookups (404)", got)
		}
		mapped := []string{"198.51.100.50", "198.51.100.50", "::ffff:198.51.100.50", "::ffff:198.51.100.50", "198.51.100.50", "::ffff:198.51.100.50"}
		if got := e.statuses(t, get, mapped); got[http.StatusNotFound] != 5 || got[http.StatusTooManyRequests] != 1 {
			t.Errorf("6 lookups from one IPv4 address, written both ways, answered %v, want 5 lookups and 1 refusal", got)
		}
	})
}

// TestPublicLimitPerNetwork: the activation routes' public limit of 30 a
// minute counts one IPv6 /64 as one client.
func TestPublicLimitPerNetwork(t *testing.T) {
	e := newTestEnvWith(t, envOptions{trustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	status := call{method: "POST", path: "/v1/activations/status", body: map[string]any{}, invalid: true}
	got := e.statuses(t, status, addresses(40, inNetwork))
	if got[http.StatusTooManyRequests] != 10 {
		t.Errorf("40 status checks from one /64 answered %v, want 30 counted and 10 refused (429)", got)
	}
}

// TestAdminLimitPerNetwork: requests without a key are counted per client
// address, and one IPv6 /64 is one client.
func TestAdminLimitPerNetwork(t *testing.T) {
	e := newTestEnvWith(t, envOptions{trustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	org := call{method: "GET", path: "/v1/admin/organization", invalid: true}
	got := e.statuses(t, org, addresses(301, inNetwork))
	if got[http.StatusUnauthorized] != 300 || got[http.StatusTooManyRequests] != 1 {
		t.Errorf("301 requests without a key from one /64 answered %v, want 300 401s and one 429", got)
	}
}

package integration

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// adminLimit is the contract's administration limit: 300 requests a minute
// per key and route.
const adminLimit = 300

// Two processes on one Redis count one limit: requests with one key, spread
// over both, count down one X-RateLimit-Remaining-admin, and the request
// after the 300th is refused on either.
func TestRateLimitSharedBetweenProcesses(t *testing.T) {
	s := newService(t)
	rdb := s.useRedis(t)
	a, b := s.start(t, "a", nil), s.start(t, "b", nil)
	waitReady(t, a, b)
	key := s.newOrg(t, "acme")

	// Windows are counted in the Redis server's time.
	now, err := rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatalf("Redis TIME: %v", err)
	}
	freshWindow(t, now, 10*time.Second)
	ps := []*process{a, b}
	for i := range adminLimit {
		p := ps[i%2]
		ans := p.call(t, "GET", "/v1/admin/organization", key, nil)
		if ans.status != http.StatusOK {
			t.Fatalf("request %d on %s: status %d %v, want 200", i+1, p.name, ans.status, ans.body)
		}
		want := strconv.Itoa(adminLimit - 1 - i)
		if got := ans.header.Get("X-RateLimit-Remaining-admin"); got != want {
			t.Fatalf("request %d on %s: X-RateLimit-Remaining-admin = %q, want %s (one count across processes)", i+1, p.name, got, want)
		}
	}
	for _, p := range ps {
		ans := p.call(t, "GET", "/v1/admin/organization", key, nil)
		if ans.status != http.StatusTooManyRequests || ans.code() != "rate_limited" {
			t.Errorf("request past the limit on %s: status %d %v, want 429 rate_limited", p.name, ans.status, ans.body)
		}
		if n, err := strconv.Atoi(ans.header.Get("Retry-After-admin")); err != nil || n < 1 || n > 60 {
			t.Errorf("request past the limit on %s: Retry-After-admin = %q, want 1 to 60 seconds", p.name, ans.header.Get("Retry-After-admin"))
		}
		if v := ans.header.Get("Retry-After"); v != "" {
			t.Errorf("request past the limit on %s: Retry-After = %q, want none", p.name, v)
		}
		if v := ans.header.Get("X-RateLimit-Remaining-admin"); v != "0" {
			t.Errorf("request past the limit on %s: X-RateLimit-Remaining-admin = %q, want 0", p.name, v)
		}
	}
}

// With Redis unreachable from the start, the service starts and keeps
// answering, counting limits per process (the documented fallback), and
// /readyz says so.
func TestRedisUnreachable(t *testing.T) {
	s := newService(t)
	s.env["LICENTIA_REDIS_URL"] = "redis://" + freeAddr(t) + "/0"
	a, b := s.start(t, "a", nil), s.start(t, "b", nil)
	// /readyz answers 503 throughout; /healthz says when they serve.
	a.waitFor(t, "/healthz")
	b.waitFor(t, "/healthz")
	for _, p := range []*process{a, b} {
		checkNotReady(t, p)
	}
	key := s.newOrg(t, "acme")
	freshWindow(t, time.Now(), 10*time.Second)
	checkCounts(t, key, []count{{a, "299"}, {a, "298"}, {b, "299"}, {a, "297"}, {b, "298"}})
}

// Redis lost under running processes: they keep answering, counting per
// process from then on, and /readyz says so.
func TestRedisLostWhileServing(t *testing.T) {
	s := newService(t)
	rdb := s.useRedis(t)
	u, err := url.Parse(s.env["LICENTIA_REDIS_URL"])
	if err != nil {
		t.Fatal(err)
	}
	proxy := newRedisProxy(t, u.Host)
	u.Host = proxy.addr()
	s.env["LICENTIA_REDIS_URL"] = u.String()
	a, b := s.start(t, "a", nil), s.start(t, "b", nil)
	waitReady(t, a, b)
	key := s.newOrg(t, "acme")
	now, err := rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatalf("Redis TIME: %v", err)
	}
	freshWindow(t, now, 10*time.Second)
	checkCounts(t, key, []count{{a, "299"}, {b, "298"}})

	proxy.cutOff()
	for _, p := range []*process{a, b} {
		checkNotReady(t, p)
	}
	// The counts so far are in Redis; each process now counts its own.
	checkCounts(t, key, []count{{a, "299"}, {a, "298"}, {b, "299"}})
}

// checkNotReady checks that p's /readyz answers 503 service_unavailable,
// naming the rate limiter.
func checkNotReady(t *testing.T, p *process) {
	t.Helper()
	ans := p.call(t, "GET", "/readyz", "", nil)
	e, _ := ans.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if ans.status != http.StatusServiceUnavailable || ans.code() != "service_unavailable" || !strings.Contains(msg, "rate limiter") {
		t.Errorf("GET /readyz on %s: status %d %v, want 503 service_unavailable naming the rate limiter", p.name, ans.status, ans.body)
	}
}

// count is the X-RateLimit-Remaining-admin a request to p should show.
type count struct {
	p         *process
	remaining string
}

// checkCounts sends one administration request per count, in order, each
// of which must answer 200 with the rate-limit headers.
func checkCounts(t *testing.T, key string, counts []count) {
	t.Helper()
	for _, c := range counts {
		ans := c.p.must(t, http.StatusOK, "GET", "/v1/admin/organization", key, nil)
		if got := ans.header.Get("X-RateLimit-Limit-admin"); got != strconv.Itoa(adminLimit) {
			t.Errorf("GET /v1/admin/organization on %s: X-RateLimit-Limit-admin = %q, want %d", c.p.name, got, adminLimit)
		}
		if got := ans.header.Get("X-RateLimit-Remaining-admin"); got != c.remaining {
			t.Errorf("GET /v1/admin/organization on %s: X-RateLimit-Remaining-admin = %q, want %s", c.p.name, got, c.remaining)
		}
	}
}

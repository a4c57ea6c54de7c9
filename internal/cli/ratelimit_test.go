package cli_test

import (
	"io"
	"net/http"
	"testing"
)

// TestServeShowsRateLimiterFallback: with Redis unreachable, serve counts
// the rate limits per process and its metrics say so.
func TestServeShowsRateLimiterFallback(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_REDIS_URL"] = "redis://127.0.0.1:1/0"
	h.vars["LICENTIA_METRICS_LISTEN"] = "127.0.0.1:0"
	app, base := h.serve(t, io.Discard)
	for range 3 {
		if status, _ := send(t, http.MethodGet, base+"/v1/admin/organization", "", "", ""); status != http.StatusUnauthorized {
			t.Fatalf("GET /v1/admin/organization without a key = %d, want 401", status)
		}
	}
	fams := (&metricsService{app: app}).scrape(t)
	if v, ok := value(fams, "licentia_rate_limiter_fallback", nil); !ok || v != 1 {
		t.Errorf("licentia_rate_limiter_fallback = %v (found %v), want 1", v, ok)
	}
	if v, ok := value(fams, "licentia_rate_limiter_fallback_requests_total", nil); !ok || v < 3 {
		t.Errorf("licentia_rate_limiter_fallback_requests_total = %v (found %v), want at least the 3 requests", v, ok)
	}
}

package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/licentia/licentia/internal/metrics"
)

// TestNilRecordsNothing: every method of a nil *Metrics may be called, so
// a caller never checks whether metrics are on; its handler answers 404.
func TestNilRecordsNothing(t *testing.T) {
	var m *metrics.Metrics
	m.Request("api", "GET /healthz", "GET", 200, time.Millisecond)
	m.Activation(metrics.RouteStatus, metrics.ResultOK)
	m.Delivery(metrics.DeliveryDelivered)
	m.ProviderEvent("stripe", metrics.ProviderApplied)
	m.RateLimited("public")
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != http.StatusNotFound {
		t.Errorf("nil Metrics handler = %d, want 404", w.Code)
	}
}

// scrape serves m's handler once and returns the text.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d, want 200", w.Code)
	}
	return w.Body.String()
}

// TestRecorded: each method counts under its own labels, and the handler
// serves the text format with the Go runtime and process collectors.
func TestRecorded(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.Request("api", "POST /v1/activations/status", "POST", 200, 2*time.Millisecond)
	m.Request("api", "POST /v1/activations/status", "POST", 200, 20*time.Millisecond)
	m.Request("console", "GET /console/sign-in", "GET", 0, time.Millisecond)
	m.Activation(metrics.RouteStatus, metrics.ResultOK)
	m.Activation(metrics.RouteActivate, "seat_limit_reached")
	m.Delivery(metrics.DeliveryRetrying)
	m.ProviderEvent("paddle", metrics.ProviderIgnored)
	m.RateLimited("lookup")
	m.RateLimited("lookup")

	want := `
# HELP licentia_http_requests_total HTTP requests answered, by server (api, console, oauth, mcp), route pattern ("" for none), method and status.
# TYPE licentia_http_requests_total counter
licentia_http_requests_total{method="GET",pattern="GET /console/sign-in",server="console",status="200"} 1
licentia_http_requests_total{method="POST",pattern="POST /v1/activations/status",server="api",status="200"} 2
# HELP licentia_activations_total Answers of the activation routes, by route (activate, activate_offline, status, deactivate, lease, lease_renew, lease_release) and result (ok or the error code).
# TYPE licentia_activations_total counter
licentia_activations_total{result="ok",route="status"} 1
licentia_activations_total{result="seat_limit_reached",route="activate"} 1
# HELP licentia_webhook_deliveries_total Webhook delivery attempts recorded, by outcome: delivered, retrying (failed, tried again later) or given_up.
# TYPE licentia_webhook_deliveries_total counter
licentia_webhook_deliveries_total{outcome="delivered"} 0
licentia_webhook_deliveries_total{outcome="given_up"} 0
licentia_webhook_deliveries_total{outcome="retrying"} 1
# HELP licentia_provider_events_total Payment provider webhook events received, by provider and outcome: applied, held, repeated, ignored, refused or failed.
# TYPE licentia_provider_events_total counter
licentia_provider_events_total{outcome="ignored",provider="paddle"} 1
# HELP licentia_rate_limited_total Requests refused 429 by a rate limit, by rule.
# TYPE licentia_rate_limited_total counter
licentia_rate_limited_total{rule="lookup"} 2
`
	names := []string{"licentia_http_requests_total", "licentia_activations_total", "licentia_webhook_deliveries_total",
		"licentia_provider_events_total", "licentia_rate_limited_total"}
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	// Two status checks, one in the 2.5 ms bucket and one in the 25 ms one.
	text := scrape(t, m)
	for _, line := range []string{
		`licentia_http_request_duration_seconds_bucket{pattern="POST /v1/activations/status",server="api",le="0.001"} 0`,
		`licentia_http_request_duration_seconds_bucket{pattern="POST /v1/activations/status",server="api",le="0.0025"} 1`,
		`licentia_http_request_duration_seconds_bucket{pattern="POST /v1/activations/status",server="api",le="0.025"} 2`,
		`licentia_http_request_duration_seconds_count{pattern="POST /v1/activations/status",server="api"} 2`,
		"go_goroutines ",
		"process_cpu_seconds_total ",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("GET /metrics lacks %q", line)
		}
	}
}

// TestLabelsFromFixedSets: the method is the client's to choose, so any
// but the standard methods counts as "other"; a status out of range too.
func TestLabelsFromFixedSets(t *testing.T) {
	m := metrics.New(metrics.Options{})
	for _, method := range []string{"GET", "PROPFIND", "ada@example.com", strings.Repeat("X", 1000)} {
		m.Request("api", "", method, 404, time.Millisecond)
	}
	m.Request("api", "", "GET", 999, time.Millisecond)
	want := `
# HELP licentia_http_requests_total HTTP requests answered, by server (api, console, oauth, mcp), route pattern ("" for none), method and status.
# TYPE licentia_http_requests_total counter
licentia_http_requests_total{method="GET",pattern="",server="api",status="404"} 1
licentia_http_requests_total{method="GET",pattern="",server="api",status="other"} 1
licentia_http_requests_total{method="other",pattern="",server="api",status="404"} 3
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), "licentia_http_requests_total"); err != nil {
		t.Error(err)
	}
}

// TestQueueDepth: the depth is read on each scrape, within
// QueueReadTimeout.
func TestQueueDepth(t *testing.T) {
	var n int64 = 3
	var deadline time.Duration
	m := metrics.New(metrics.Options{PendingDeliveries: func(ctx context.Context) (int64, error) {
		d, ok := ctx.Deadline()
		if !ok {
			t.Error("the queue read has no deadline")
		}
		deadline = time.Until(d)
		return n, nil
	}})
	for _, want := range []string{"3", "7"} {
		text := scrape(t, m)
		if !strings.Contains(text, "\nlicentia_webhook_queue_depth "+want+"\n") {
			t.Errorf("GET /metrics lacks licentia_webhook_queue_depth %s", want)
		}
		n = 7
	}
	if deadline <= 0 || deadline > metrics.QueueReadTimeout {
		t.Errorf("queue read deadline in %v, want within %v", deadline, metrics.QueueReadTimeout)
	}
}

// TestQueueDepthUnread: when the database does not answer, the scrape
// still serves every other series, leaves the depth out (for absent() to
// see) and logs why.
func TestQueueDepthUnread(t *testing.T) {
	var logs bytes.Buffer
	m := metrics.New(metrics.Options{
		PendingDeliveries: func(context.Context) (int64, error) { return 0, errors.New("database unreachable") },
		Logger:            slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	m.RateLimited("admin")
	text := scrape(t, m)
	if strings.Contains(text, "licentia_webhook_queue_depth") {
		t.Errorf("GET /metrics holds the queue depth though it could not be read:\n%s", text)
	}
	if !strings.Contains(text, `licentia_rate_limited_total{rule="admin"} 1`) {
		t.Error("GET /metrics lost the other series when the queue depth could not be read")
	}
	if !strings.Contains(logs.String(), "webhook queue depth not read") || !strings.Contains(logs.String(), "database unreachable") {
		t.Errorf("logs = %s, want the failed read", logs.String())
	}
}

// TestWithoutQueue: without a read of the queue there is no depth series.
func TestWithoutQueue(t *testing.T) {
	if text := scrape(t, metrics.New(metrics.Options{})); strings.Contains(text, "licentia_webhook_queue_depth") {
		t.Error("GET /metrics holds a queue depth without PendingDeliveries")
	}
}

package webhooks_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/webhooks"
)

// TestWorkerMetrics: each recorded attempt is counted by the state it
// left its delivery in: delivered, retrying while retries remain, then
// given_up once they are spent.
func TestWorkerMetrics(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	ep := q.endpoint(t, "/counted")
	m := metrics.New(metrics.Options{})
	w := webhooks.NewWorker(webhooks.WorkerOptions{Store: q.st, Clock: q.clk, Keys: q.keys, Client: q.client,
		BaseURL: workerBaseURL, Logger: slog.New(slog.DiscardHandler), Metrics: m})

	q.emit(t, 1)
	if n, err := w.RunOnce(t.Context()); err != nil || n != 1 {
		t.Fatalf("RunOnce() = %d, %v; want 1", n, err)
	}
	q.hooks.status.Store(http.StatusServiceUnavailable)
	q.clk.Advance(time.Second)
	q.emit(t, 1)
	for i := range webhooks.MaxAttempts {
		if n, err := w.RunOnce(t.Context()); err != nil || n != 1 {
			t.Fatalf("RunOnce() of attempt %d = %d, %v; want 1", i+1, n, err)
		}
		// Past the longest wait before the next attempt, jitter included.
		q.clk.Advance(27 * time.Hour)
	}
	if d := q.deliveries(t, ep)[0]; d.Status != licentia.DeliveryFailed || d.Attempts != webhooks.MaxAttempts {
		t.Fatalf("delivery = %+v, want failed after %d attempts", d, webhooks.MaxAttempts)
	}
	want := `
# HELP licentia_webhook_deliveries_total Webhook delivery attempts recorded, by outcome: delivered, retrying (failed, tried again later) or given_up.
# TYPE licentia_webhook_deliveries_total counter
licentia_webhook_deliveries_total{outcome="delivered"} 1
licentia_webhook_deliveries_total{outcome="given_up"} 1
licentia_webhook_deliveries_total{outcome="retrying"} 8
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), "licentia_webhook_deliveries_total"); err != nil {
		t.Error(err)
	}
}

package postgres_test

import (
	"testing"

	"github.com/licentia/licentia/internal/store/postgres"
)

// TestPendingDeliveriesReadIndexOnly shows that the queue's depth, read
// on every metrics scrape, counts the partial index of pending deliveries
// and never reads the table, which keeps every delivery of the last 30
// days (see explainer for how the plan is asked).
func TestPendingDeliveriesReadIndexOnly(t *testing.T) {
	plan, raw := explainer(t)(postgres.PendingDeliveriesSQL)
	scans := 0
	for n := range plan.walk {
		if n.Relation != "webhook_deliveries" {
			continue
		}
		scans++
		if n.Type != "Index Only Scan" || n.Index != "webhook_deliveries_due" || n.Filter != "" {
			t.Errorf("%s using %s, filter %q; want an index only scan of webhook_deliveries_due, no filter", n.Type, n.Index, n.Filter)
		}
	}
	if scans != 1 {
		t.Errorf("plan %s, want one scan of webhook_deliveries", raw)
	}
}

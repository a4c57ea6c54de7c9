package sqlite

import (
	"strings"
	"testing"
)

// TestPendingDeliveriesReadIndexOnly shows that the queue's depth, read
// on every metrics scrape, counts the partial index of pending deliveries
// and never scans the table, which keeps every delivery of the last 30
// days.
func TestPendingDeliveriesReadIndexOnly(t *testing.T) {
	db, _ := openWith(t)
	plan := queryPlan(t, db.read, pendingDeliveriesSQL)
	if all := strings.Join(plan, "\n"); !strings.Contains(all, "USING COVERING INDEX webhook_deliveries_due") {
		t.Errorf("plan %q, want the count read from the covering index webhook_deliveries_due", plan)
	}
}

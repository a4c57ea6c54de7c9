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
	rows, err := db.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+pendingDeliveriesSQL)
	if err != nil {
		t.Fatalf("EXPLAIN QUERY PLAN error = %v", err)
	}
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(plan, "\n"); !strings.Contains(all, "USING COVERING INDEX webhook_deliveries_due") {
		t.Errorf("plan %q, want the count read from the covering index webhook_deliveries_due", plan)
	}
}

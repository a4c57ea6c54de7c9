package postgres_test

import (
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestPendingDeliveriesReadIndexOnly shows that the queue's depth, read
// on every metrics scrape, counts the partial index of pending deliveries
// and never reads the table, which keeps every delivery of the last 30
// days. Sequential and bitmap scans are turned off: on the test's empty
// table the planner would rightly prefer reading the table, and the
// question is which index serves.
func TestPendingDeliveriesReadIndexOnly(t *testing.T) {
	ctx := t.Context()
	url := storetest.PostgresURL(t)
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("Connect() error = %v", err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	var raw []byte
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off"); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+postgres.PendingDeliveriesSQL).Scan(&raw)
	})
	if err != nil {
		t.Fatalf("EXPLAIN error = %v", err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN = %s, %v", raw, err)
	}
	scans := 0
	for n := range plans[0].Plan.walk {
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

package postgres_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestExpiredLeasesReadIndexes shows that the lease sweep reaches
// activations only through indexes: the products with an interval, their
// licences by organization and product, and each licence's live
// activations by last_seen_at. No table is read whole, so the activations
// of products without leases cost nothing. Sequential and bitmap scans are
// turned off, as in TestCountsSinceReadIndexesOnly.
func TestExpiredLeasesReadIndexes(t *testing.T) {
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
		return tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+postgres.LeasesSQL, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), 100).Scan(&raw)
	})
	if err != nil {
		t.Fatalf("EXPLAIN error = %v", err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN = %s, %v", raw, err)
	}
	want := map[string]string{"products": "products_heartbeat", "licences": "licences_by_product_issue", "activations": "activations_live_seen"}
	got := map[string]string{}
	for n := range plans[0].Plan.walk {
		if n.Relation != "" {
			got[n.Relation] = n.Index
		}
	}
	for rel, index := range want {
		if got[rel] != index {
			t.Errorf("%s read by index %q, want %s; plan %s", rel, got[rel], index, raw)
		}
	}
}

package postgres_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestCountsSinceReadIndexesOnly shows that issued_since and revoked_since,
// of the organization and of one product, each scan a range of an index
// holding every column they read, with the product in the range when there
// is one, so no licence is read to test its product. Reading them took the
// counts of a product of a million licences past 100 ms (see explainer for
// how the plan is asked).
func TestCountsSinceReadIndexesOnly(t *testing.T) {
	explain := explainer(t)
	for _, product := range []bool{false, true} {
		args := []any{licentia.NewID(), time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
		if product {
			args = append(args, "product")
		}
		plan, raw := explain(postgres.SinceSQL(product), args...)
		scans := 0
		for n := range plan.walk {
			if n.Relation != "licences" {
				continue
			}
			scans++
			if n.Type != "Index Only Scan" || n.Filter != "" || !strings.Contains(n.IndexCond, "_at >=") ||
				(product && !strings.Contains(n.IndexCond, "product_id")) {
				t.Errorf("product %t: %s using %s, index condition %q, filter %q; want an index only scan of a time range by org_id and product_id, no filter",
					product, n.Type, n.Index, n.IndexCond, n.Filter)
			}
		}
		if scans != 2 {
			t.Errorf("product %t: plan %s, want two scans of licences", product, raw)
		}
	}
}

// explainer migrates a database and returns a function that plans a
// query there with sequential and bitmap scans turned off: on a test's
// empty tables the planner would rightly prefer reading them, and the
// question is which index serves. It returns the plan's root and its JSON.
func explainer(t *testing.T) func(query string, args ...any) (*planNode, []byte) {
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
	return func(query string, args ...any) (*planNode, []byte) {
		t.Helper()
		var raw []byte
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off"); err != nil {
				return err
			}
			return tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+query, args...).Scan(&raw)
		})
		if err != nil {
			t.Fatalf("EXPLAIN error = %v", err)
		}
		var plans []struct{ Plan planNode }
		if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
			t.Fatalf("EXPLAIN = %s, %v", raw, err)
		}
		return &plans[0].Plan, raw
	}
}

// planNode is one node of EXPLAIN (FORMAT JSON).
type planNode struct {
	Type      string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	Index     string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Filter    string     `json:"Filter"`
	Plans     []planNode `json:"Plans"`
}

// walk yields n and every node below it.
func (n *planNode) walk(yield func(*planNode) bool) {
	var visit func(*planNode) bool
	visit = func(n *planNode) bool {
		if !yield(n) {
			return false
		}
		for i := range n.Plans {
			if !visit(&n.Plans[i]) {
				return false
			}
		}
		return true
	}
	visit(n)
}

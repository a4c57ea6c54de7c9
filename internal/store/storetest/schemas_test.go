package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/store/postgres"
)

func TestChildrenFirst(t *testing.T) {
	parents := map[string][]string{
		"organizations": nil,
		"products":      {"organizations"},
		"licences":      {"organizations", "products"},
		"activations":   {"licences"},
		"events":        {"licences", "organizations"},
		"settings":      nil,
	}
	order, err := childrenFirst(parents)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != len(parents) {
		t.Fatalf("childrenFirst() = %v, want every table once", order)
	}
	for table, refs := range parents {
		for _, p := range refs {
			if slices.Index(order, table) > slices.Index(order, p) {
				t.Errorf("childrenFirst() = %v: %s after %s, which it refers to", order, table, p)
			}
		}
	}
	if _, err := childrenFirst(map[string][]string{"a": {"b"}, "b": {"a"}}); err == nil {
		t.Error("childrenFirst() of a cycle error = nil, want one")
	}
}

// TestSchemaReused: a schema given back comes out again migrated, with no
// rows and its sequences restarted; one whose tables a test changed, or
// that a session still works in, is dropped instead.
func TestSchemaReused(t *testing.T) {
	raw := adminURL(t)
	ctx := t.Context()
	var pool schemaPool
	t.Cleanup(func() {
		if err := pool.dropAll(); err != nil {
			t.Error(err)
		}
	})
	exec := func(dsn string, stmts ...string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		for _, stmt := range stmts {
			if _, err := conn.Exec(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
	count := func(dsn, query string, args ...any) int {
		t.Helper()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, query, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	exists := func(name string) bool {
		return count(raw, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", name) == 1
	}

	first, err := pool.take(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, first.url)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	audit := `INSERT INTO audit_log (id, org_id, action, actor_type, at, data)
		SELECT gen_random_uuid(), id, 'test', 'system', now(), '{}' FROM organizations`
	org := "INSERT INTO organizations (id, name, slug, plan, created_at) VALUES (gen_random_uuid(), 'A', 'a', 'free', now())"
	exec(first.url, org, audit)
	if err := pool.give(first); err != nil {
		t.Fatal(err)
	}

	again, err := pool.take(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatalf("take() after give() = %s, want %s again", again.name, first.name)
	}
	if n := count(again.url, "SELECT count(*) FROM organizations"); n != 0 {
		t.Errorf("organizations in the reused schema = %d, want 0", n)
	}
	exec(again.url, org, audit)
	if n := count(again.url, "SELECT max(seq) FROM audit_log"); n != 1 {
		t.Errorf("the audit log's first seq in the reused schema = %d, want 1", n)
	}
	db, err = postgres.Open(ctx, again.url)
	if err != nil {
		t.Fatalf("open the reused schema: %v", err)
	}
	db.Close()

	// Changed tables: dropped.
	exec(again.url, "ALTER TABLE licences ADD COLUMN colour text")
	if err := pool.give(again); err != nil {
		t.Fatal(err)
	}
	if exists(first.name) {
		t.Errorf("schema %s with a changed table still exists, want it dropped", first.name)
	}

	// A session left open: dropped once it ends, never handed out again.
	open, err := pool.take(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if open == first {
		t.Fatal("take() handed out the dropped schema")
	}
	conn, err := pgx.Connect(ctx, open.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := pool.give(open); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(pool.idle, open) || exists(open.name) {
		t.Errorf("schema %s with a session open at its return was kept, want it dropped", open.name)
	}
}

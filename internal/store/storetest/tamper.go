package storetest

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/store"
)

// databases maps each store OpenSQLite and OpenPostgres opened to its
// database URL, as LICENTIA_DATABASE_URL names it.
var databases sync.Map

// DatabaseURL returns the URL of the database behind s, which OpenSQLite
// or OpenPostgres opened, for tests that run the command line on it.
func DatabaseURL(t testing.TB, s store.Store) string {
	t.Helper()
	u, ok := databases.Load(s)
	if !ok {
		t.Fatalf("DatabaseURL: the store was not opened by storetest")
	}
	return u.(string)
}

// Tamper runs stmts on the database behind s on a connection of its own,
// with foreign keys unchecked: what a hand edit or a damaged restore does,
// for tests of the integrity check. It never goes through the store, so
// no counter follows the change.
func Tamper(t testing.TB, s store.Store, stmts ...string) {
	t.Helper()
	ctx := t.Context()
	dsn := DatabaseURL(t, s)
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		// SQLite checks foreign keys only on connections that turn them on.
		db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatalf("Tamper: %v", err)
		}
		defer db.Close()
		for _, stmt := range stmts {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("Tamper: %s: %v", stmt, err)
			}
		}
		return
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("Tamper: connect to %s: %v", PostgresURLVar, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// Foreign keys are triggers in PostgreSQL; the replica role fires none.
	for _, stmt := range append([]string{"SET session_replication_role = replica"}, stmts...) {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("Tamper: %s: %v", stmt, err)
		}
	}
}

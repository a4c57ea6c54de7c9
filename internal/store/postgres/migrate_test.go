package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3/lock"

	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestMigrationLockPerSchema: while another session holds the migration
// lock of one schema, a store in a second schema of the database migrates
// at once, and one in the first waits until the lock is let go. The waits
// end with their contexts: under the guard, a store that waited for the
// other schema's lock would fail the test instead of hanging it.
func TestMigrationLockPerSchema(t *testing.T) {
	ctx := t.Context()
	busy, free := storetest.PostgresURL(t), storetest.PostgresURL(t)
	holder, err := pgx.Connect(ctx, busy)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.WithoutCancel(ctx))
	var schema string
	if err := holder.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	id := postgres.MigrationLock(schema)
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, id); err != nil {
		t.Fatal(err)
	}

	open := func(url string, guard time.Duration) error {
		ctx, cancel := context.WithTimeout(ctx, guard)
		defer cancel()
		db, err := postgres.Open(ctx, url)
		if err == nil {
			db.Close()
		}
		return err
	}
	if err := open(free, 20*time.Second); err != nil {
		t.Fatalf("Open() in another schema while the lock is held: %v, want it migrated", err)
	}
	if err := open(busy, 1500*time.Millisecond); err == nil {
		t.Fatal("Open() in the locked schema succeeded, want it to wait for the lock")
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, id); err != nil {
		t.Fatal(err)
	}
	if err := open(busy, 20*time.Second); err != nil {
		t.Fatalf("Open() once the lock is let go: %v", err)
	}

	if got := postgres.MigrationLock("public"); got != lock.DefaultLockID {
		t.Errorf("MigrationLock(public) = %d, want goose's lock %d, which older versions take", got, lock.DefaultLockID)
	}
	if postgres.MigrationLock("a") == postgres.MigrationLock("b") {
		t.Error("two schemas share one migration lock")
	}
}

package storetest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/sqlite"
)

// PostgresURLVar names the variable holding the URL of the PostgreSQL server
// tests use. Tests that need one skip when it is unset.
const PostgresURLVar = "LICENTIA_TEST_POSTGRES_URL"

// OpenSQLite opens a new SQLite store on a file in t.TempDir(), a file
// because WAL mode needs one, and closes it when the test ends.
func OpenSQLite(t *testing.T) store.Store {
	t.Helper()
	path := SQLiteFile(t)
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	databases.Store(store.Store(db), "sqlite:"+path)
	t.Cleanup(func() {
		databases.Delete(store.Store(db))
		if err := db.Close(); err != nil {
			t.Errorf("Close() error = %v", err)
		}
	})
	return db
}

// SQLiteFile returns the path of a new SQLite database in t.TempDir(),
// every migration applied, for a test that opens it itself: a copy of one
// database migrated once a test process. Migrating takes over a second
// under the race detector, which runs SQLite's code instrumented; a copy
// takes milliseconds, and sqlite.Open finds nothing left to apply.
func SQLiteFile(t testing.TB) string {
	t.Helper()
	raw, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("migrate the template database: %v", err)
	}
	path := filepath.Join(t.TempDir(), "licentia.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sqliteTemplate is the file of a database that sqlite.Open migrated and
// Close checkpointed whole, read once a process.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "licentia-storetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "licentia.db")
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	// The last connection's close checkpoints the WAL into the file and
	// removes it; a WAL left behind would hold migrations the copy lacks.
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, errors.New("the WAL outlived the close")
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return os.ReadFile(path)
})

// OpenPostgres opens a PostgreSQL store in a schema no other test uses
// while it runs, migrated and without rows, so tests never see each other's
// rows: a schema of its own, dropped when the test ends, or under Main one
// another test of the package had, emptied.
func OpenPostgres(t *testing.T) store.Store {
	t.Helper()
	return OpenPostgresTB(t)
}

// OpenPostgresTB is OpenPostgres for a test or a benchmark.
func OpenPostgresTB(t testing.TB) store.Store {
	t.Helper()
	dsn := postgresStoreURL(t)
	db, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("postgres.Open() error = %v", err)
	}
	databases.Store(store.Store(db), dsn)
	t.Cleanup(func() {
		databases.Delete(store.Store(db))
		if err := db.Close(); err != nil {
			t.Errorf("Close() error = %v", err)
		}
	})
	return db
}

// PostgresURL creates an empty schema with a random name and returns the URL
// of PostgresURLVar with search_path set to it, so every connection opened
// with the URL works in that schema. The schema is dropped when the test
// ends, after any cleanup registered later (such as closing a store).
func PostgresURL(t testing.TB) string {
	t.Helper()
	raw := adminURL(t)
	ctx := context.WithoutCancel(t.Context()) // t.Context() ends before cleanups run
	name := newSchemaName()
	dsn, err := schemaURL(raw, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := adminExec(ctx, raw, createSchema(name)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := adminExec(ctx, raw, dropSchema(name)); err != nil {
			t.Error(err)
		}
	})
	return dsn
}

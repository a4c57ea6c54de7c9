package migratedata_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/migratedata"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

// source makes a SQLite database holding one organization and returns its
// path.
func source(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "licentia.db")
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o := &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Plan: licentia.PlanFree,
		CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	if err := db.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateOrganization(t.Context(), o) }); err != nil {
		t.Fatal(err)
	}
	return path
}

// duringCopy returns a Progress function that runs fn once, as the copy
// starts.
func duringCopy(fn func()) func(done, total int64) {
	var once sync.Once
	return func(int64, int64) { once.Do(fn) }
}

// TestCopyHoldsTheWriteLock: no other connection can commit to the source
// while it is copied; the copy holds SQLite's write lock throughout.
func TestCopyHoldsTheWriteLock(t *testing.T) {
	path := source(t)
	to := storetest.PostgresURL(t)
	// No busy timeout: the writer is refused at once instead of waiting
	// for the copy to end.
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var writeErr error
	res, err := migratedata.Copy(t.Context(), path, to, migratedata.Options{Progress: duringCopy(func() {
		_, writeErr = w.Exec(`INSERT INTO settings (name, value) VALUES ('written_during_copy', 'x')`)
	})})
	if err != nil {
		t.Fatalf("Copy() error = %v", err)
	}
	if writeErr == nil {
		t.Error("a write during the copy committed, want it refused (the database is locked)")
	}
	if n := res.Tables["organizations"]; n != 1 {
		t.Errorf("Copy() copied %d organizations, want 1", n)
	}
}

// TestCopyRefusesChangedSource: should a write reach the source's WAL
// during the copy all the same (a writer SQLite's locks do not stop, as on
// a file system whose locks do not work), the copy is refused and
// PostgreSQL keeps nothing of it.
func TestCopyRefusesChangedSource(t *testing.T) {
	path := source(t)
	to := storetest.PostgresURL(t)
	_, err := migratedata.Copy(t.Context(), path, to, migratedata.Options{Progress: duringCopy(func() {
		f, err := os.OpenFile(path+"-wal", os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Errorf("open the WAL: %v", err)
			return
		}
		defer f.Close()
		// Frames without a valid checksum: SQLite ignores them later.
		if _, err := f.Write(make([]byte, 4096+24)); err != nil {
			t.Errorf("write the WAL: %v", err)
		}
	})})
	if code := licentia.ErrorCode(err); code != licentia.CodeDatabaseInUse {
		t.Fatalf("Copy() with the WAL written during the copy: error %v, want %s", err, licentia.CodeDatabaseInUse)
	}
	conn, err := pgx.Connect(t.Context(), to)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM organizations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("PostgreSQL holds %d organizations after the refusal, want none", n)
	}
}

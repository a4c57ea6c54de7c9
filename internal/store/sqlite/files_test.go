package sqlite_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
)

// withUmask runs the test under the usual umask 022, which lets files be
// created readable by everyone unless their creator asks otherwise. The
// umask belongs to the process: tests that change it do not run in
// parallel.
func withUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
}

// openWritten opens the database at path and commits a write, so that
// SQLite has made its -wal and -shm files.
func openWritten(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.InTx(t.Context(), func(tx store.Tx) error {
		return tx.SetSetting(t.Context(), "test", "written")
	})
	if err != nil {
		t.Fatalf("InTx() error = %v", err)
	}
	return db
}

func wantMode(t *testing.T, name string, want fs.FileMode) {
	t.Helper()
	info, err := os.Stat(name)
	if err != nil {
		t.Fatalf("Stat(%s) error = %v", name, err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s mode = %04o, want %04o", filepath.Base(name), got, want)
	}
}

// TestNewDatabaseIsPrivate: a new database's directory is 0700 and the
// database, -wal and -shm files 0600, on real files after a write: they
// hold customer emails and key hashes.
func TestNewDatabaseIsPrivate(t *testing.T) {
	withUmask(t)
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "licentia.db")
	openWritten(t, path)
	wantMode(t, dir, 0o700)
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		wantMode(t, name, 0o600)
	}
}

// TestExistingDatabaseTightened: the files of a database created with
// looser modes are made 0600 when it is opened, and reported; its
// directory, which others may write in, is reported but left as it is
// (it may hold more than the database). The database still opens and
// reads.
func TestExistingDatabaseTightened(t *testing.T) {
	withUmask(t)
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "licentia.db")
	openWritten(t, path)
	files := []string{path, path + "-wal", path + "-shm"}
	for _, name := range append(files, dir) {
		if err := os.Chmod(name, 0o777); err != nil {
			t.Fatal(err)
		}
	}

	got, err := sqlite.Protect(path)
	if err != nil {
		t.Fatalf("Protect() error = %v", err)
	}
	if diff := cmp.Diff(sqlite.Files{Tightened: files, Unsafe: []string{dir}}, got); diff != "" {
		t.Errorf("Protect() mismatch (-want +got):\n%s", diff)
	}
	for _, name := range files {
		wantMode(t, name, 0o600)
	}
	wantMode(t, dir, 0o777)

	again, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("sqlite.Open() of the tightened database error = %v", err)
	}
	defer again.Close()
	if v, err := again.Setting(t.Context(), "test"); err != nil || v != "written" {
		t.Errorf("Setting() = %q, %v; want written", v, err)
	}
	if got, err := sqlite.Protect(path); err != nil || got.Tightened != nil {
		t.Errorf("Protect() again = %+v, %v; want nothing tightened", got, err)
	}
	// A directory others may only read and list is no risk: the files in
	// it are private.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := sqlite.Protect(path); err != nil || got.Tightened != nil || got.Unsafe != nil {
		t.Errorf("Protect() in a 0755 directory = %+v, %v; want nothing to report", got, err)
	}
}

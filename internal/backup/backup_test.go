package backup_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/licentia/licentia/internal/backup"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
)

func newDatabase(t *testing.T, fingerprint string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "licentia.db")
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if fingerprint != "" {
		err := db.InTx(t.Context(), func(tx store.Tx) error {
			return tx.SetSetting(t.Context(), store.SettingMasterKeyFingerprint, fingerprint)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestSnapshotReplaces shows a snapshot written over an earlier file, with
// no temporary file left beside it.
func TestSnapshotReplaces(t *testing.T) {
	src := newDatabase(t, "fp-one")
	dir := t.TempDir()
	dest := filepath.Join(dir, "backup.db")
	if err := os.WriteFile(dest, []byte("an older backup"), 0o644); err != nil {
		t.Fatal(err)
	}
	size, err := backup.Snapshot(t.Context(), src, dest, nil)
	if err != nil {
		t.Fatalf("Snapshot() error = %v", err)
	}
	st, err := os.Stat(dest)
	if err != nil || st.Size() != size || st.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot %v %v, want %d bytes of mode 0600", st, err, size)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files, want the backup alone", len(entries))
	}
	c, err := backup.Inspect(t.Context(), dest)
	if err != nil || c.MasterKeyFingerprint != "fp-one" || c.Licences != 0 {
		t.Errorf("Inspect() = %+v, %v, want fingerprint fp-one and no licences", c, err)
	}
	if _, err := backup.Snapshot(t.Context(), filepath.Join(dir, "absent.db"), filepath.Join(dir, "b2.db"), nil); err == nil {
		t.Error("Snapshot() of a missing database error = nil")
	}
}

func TestHoldsData(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "text")
	if err := os.WriteFile(text, []byte("some file that is no database at all, kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	withOrg := newDatabase(t, "fp")
	db, err := sql.Open("sqlite", withOrg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(t.Context(), `INSERT INTO organizations (id, name, slug, plan, created_at) VALUES ('o', 'O', 'o', 'free', 0)`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		want       bool
	}{
		{"absent", filepath.Join(dir, "absent.db"), false},
		{"empty file", empty, false},
		{"migrated, key recorded", newDatabase(t, "fp"), false},
		{"an organization", withOrg, true},
		{"not a database", text, true},
	} {
		if got, _ := backup.HoldsData(t.Context(), tc.path); got != tc.want {
			t.Errorf("HoldsData(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

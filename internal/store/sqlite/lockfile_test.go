//go:build unix

package sqlite_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/store/sqlite"
)

// TestLockFile: several serve processes share a database's lock file;
// migrate-data holds it alone. Each refusal names the running holders, and
// not a holder gone without letting go of its line.
func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "licentia.db")
	pid := os.Getpid()
	// A serve that was killed long ago; its pid runs nothing.
	stale := func() {
		t.Helper()
		f, err := os.OpenFile(sqlite.LockPath(path), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("2147483646 serve\n"); err != nil {
			t.Fatal(err)
		}
	}
	stale()

	a, err := sqlite.LockShared(path, "serve")
	if err != nil {
		t.Fatalf("LockShared() error = %v", err)
	}
	b, err := sqlite.LockShared(path, "serve")
	if err != nil {
		t.Fatalf("a second LockShared() error = %v, want the lock shared", err)
	}
	stale()
	wantInUse(t, "migrate-data while two serve run", func() error { _, err := sqlite.LockExclusive(path, "migrate-data"); return err },
		[]sqlite.Holder{{PID: pid, Command: "serve"}})
	if err := errors.Join(a.Close(), b.Close()); err != nil {
		t.Fatal(err)
	}

	m, err := sqlite.LockExclusive(path, "migrate-data")
	if err != nil {
		t.Fatalf("LockExclusive() once serve stopped: %v", err)
	}
	wantInUse(t, "serve while migrate-data runs", func() error { _, err := sqlite.LockShared(path, "serve"); return err },
		[]sqlite.Holder{{PID: pid, Command: "migrate-data"}})
	wantInUse(t, "a second migrate-data", func() error { _, err := sqlite.LockExclusive(path, "migrate-data"); return err },
		[]sqlite.Holder{{PID: pid, Command: "migrate-data"}})
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := sqlite.LockShared(path, "serve")
	if err != nil {
		t.Fatalf("LockShared() once migrate-data stopped: %v", err)
	}
	defer s.Close()
	if b, err := os.ReadFile(sqlite.LockPath(path)); err != nil || string(b) != line(pid, "serve") {
		t.Errorf("lock file = %q, %v; want only the running serve's line %q", b, err, line(pid, "serve"))
	}
}

func wantInUse(t *testing.T, what string, lock func() error, holders []sqlite.Holder) {
	t.Helper()
	err := lock()
	e, ok := errors.AsType[*sqlite.InUseError](err)
	if !ok {
		t.Errorf("%s: error = %v, want an *InUseError", what, err)
		return
	}
	if diff := cmp.Diff(holders, e.Holders); diff != "" {
		t.Errorf("%s: holders mismatch (-want +got):\n%s", what, diff)
	}
}

func line(pid int, command string) string { return fmt.Sprintf("%d %s\n", pid, command) }

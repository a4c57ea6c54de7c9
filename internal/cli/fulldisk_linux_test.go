package cli_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/licentia/licentia/internal/disktest"
	"github.com/licentia/licentia/internal/licentia"
)

// TestServeFullDisk: serve started on a full disk says that the disk is
// full, where, and how much is free, in place of SQLite's "disk I/O error
// (4874)" (the -shm file cannot grow) or "database or disk is full (13)".
// The disk is a small tmpfs mounted for the test, which needs root.
func TestServeFullDisk(t *testing.T) {
	for _, tt := range []struct {
		name     string
		existing bool
	}{
		{"existing database", true},
		{"new database", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := mountSmallDisk(t)
			h := newHarness(t)
			h.vars["LICENTIA_DATA_DIR"] = dir
			h.vars["LICENTIA_DATABASE_URL"] = "sqlite:" + filepath.Join(dir, "licentia.db")
			// Should the store open after all, serve fails to listen
			// rather than serving until the test times out.
			h.vars["LICENTIA_LISTEN"] = "127.0.0.1:notaport"
			if tt.existing {
				h.ok(t, "migrate")
			}
			disktest.Fill(t, filepath.Join(dir, "filler"))

			e := h.fail(t, licentia.CodeDiskFull, "serve")
			msg, _ := e["message"].(string)
			t.Logf("serve on a full disk: %s", msg)
			for _, want := range []string{"full", dir, "free"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q, want it to hold %q", msg, want)
				}
			}
			if strings.Contains(msg, "disk I/O error") || strings.Contains(msg, "(13)") {
				t.Errorf("message %q, want the disk named full, not SQLite's error", msg)
			}
		})
	}
}

// mountSmallDisk mounts a 4 MiB tmpfs on a new directory, unmounted when
// the test ends. It skips the test where mounting is not permitted.
func mountSmallDisk(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full disk is a tmpfs mounted for the test, which needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m,mode=0700"); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("a full disk is a tmpfs mounted for the test, and mount is not permitted here: %v", err)
		}
		t.Fatalf("mount tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

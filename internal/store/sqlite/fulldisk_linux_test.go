package sqlite_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/disktest"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
)

// fullDiskDir names the variable that makes TestPingFullDisk the run inside
// a mount namespace of its own.
const fullDiskDir = "LICENTIA_TEST_FULL_DISK_DIR"

// TestPingFullDisk: on a full disk, where commits fail whenever the WAL
// must grow, Ping fails, though the database still reads; with room again,
// it succeeds. The disk is a
// small tmpfs, mounted in a mount namespace of a child run of this test so
// that nothing outside it sees the mount; that needs root.
func TestPingFullDisk(t *testing.T) {
	if dir := os.Getenv(fullDiskDir); dir != "" {
		pingFullDisk(t, dir)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem needs root")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPingFullDisk$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fullDiskDir+"="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run on a full disk: %v\n%s", err, out)
	}
	t.Logf("run on a full disk:\n%s", out)
}

func pingFullDisk(t *testing.T, dir string) {
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64m"); err != nil {
		t.Fatalf("mount tmpfs on %s: %v", dir, err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "licentia.db"))
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping() with room on the disk: %v", err)
	}

	filler := filepath.Join(dir, "filler")
	disktest.Fill(t, filler)
	o := &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Plan: licentia.PlanFree,
		CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	if err := db.InTx(ctx, func(tx store.Tx) error { return tx.CreateOrganization(ctx, o) }); err != nil {
		t.Logf("write on a full disk: %v", err)
	}
	if _, err := db.Setting(ctx, store.SettingMasterKeyFingerprint); err != nil {
		t.Fatalf("read on a full disk: %v", err)
	}
	if err := db.Ping(ctx); err == nil {
		t.Error("Ping() on a full disk = nil, want an error")
	} else {
		t.Logf("Ping() on a full disk: %v", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping() with room again: %v", err)
	}
}

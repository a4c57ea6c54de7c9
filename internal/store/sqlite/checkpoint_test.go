package sqlite

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/store"
)

// TestCheckpointOffTheWriter shows that the writer connection never
// checkpoints and that committed pages still reach the database file, by
// the checkpointer alone.
func TestCheckpointOffTheWriter(t *testing.T) {
	ctx := context.Background()
	db, path := openWith(t, "CREATE TABLE scratch (b BLOB)")
	var auto int
	if err := db.write.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("writer wal_autocheckpoint = %d, %v; want 0", auto, err)
	}
	// The migrations' pages may still be in the WAL: the checkpointer has
	// not been asked yet. Take the size once they are in the file.
	db.writer.ckpt.poke()
	before := fileSize(t, path)
	const rows, size = 64, 32 << 10 // 2 MiB in 64 commits
	blob := []byte(strings.Repeat("x", size))
	for range rows {
		err := db.InTx(ctx, func(st store.Tx) error {
			_, err := st.(*tx).tx.ExecContext(ctx, "INSERT INTO scratch (b) VALUES (?)", blob)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for fileSize(t, path) < before+rows*size {
		if time.Now().After(deadline) {
			t.Fatalf("database file = %d bytes 10 s after the commits, want at least %d: nothing checkpointed it", fileSize(t, path), before+rows*size)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestWALStartsOver: under a steady stream of commits from writers in
// parallel, which keep arriving while the checkpointer copies, the WAL is
// started over, so its file stays a fraction of all that was written to it.
// Rows keyed at random change pages all over the table and its index, as
// the service's inserts do.
func TestWALStartsOver(t *testing.T) {
	ctx := context.Background()
	db, path := openWith(t, "CREATE TABLE scratch (k TEXT PRIMARY KEY, v TEXT)")
	const writers, commits = 4, 20000
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range commits {
				err := db.InTx(ctx, func(st store.Tx) error {
					_, err := st.(*tx).tx.ExecContext(ctx, "INSERT INTO scratch (k, v) VALUES (hex(randomblob(16)), hex(randomblob(100)))")
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Never started over, the WAL would hold every commit's pages, about
	// 600 MB here. Started over, its file reaches the most written between
	// two restarts: restartFrames and what these writers, far faster than
	// the service's, add while a pass runs (100 to 200 MB).
	const bound = 20 * restartFrames * 4096
	if wal := fileSize(t, path+"-wal"); wal > bound {
		t.Errorf("WAL file = %d bytes, want it started over before %d", wal, bound)
	}
}

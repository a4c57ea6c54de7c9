package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/licentia/licentia/internal/licentia"
)

// minRoom is the free space under which the database is not ready, and
// under which an I/O error is put down to a full disk: the WAL may grow to
// 16 MiB before the checkpointer starts it over (see checkpoint.go), and a
// disk with less than that may refuse a commit.
const minRoom = 16 << 20

// diskFull returns err as disk_full when it is an I/O or "full" error and
// the disk holding the database at path has less than minRoom free;
// otherwise err as it is. SQLite says only "disk I/O error (4874)" when the
// -shm file cannot grow, which names neither the cause nor the place.
func diskFull(path string, err error) error {
	if err == nil || !isIOError(err) {
		return err
	}
	dir := filepath.Dir(path)
	free, size, serr := space(dir)
	if serr != nil || free >= minRoom {
		return err
	}
	return &licentia.Error{
		Code: licentia.CodeDiskFull,
		Message: fmt.Sprintf("The disk holding the database is full: %s has %s free of %s. "+
			"Free space on that disk, or move the database to a larger one, then try again.", dir, bytesString(free), bytesString(size)),
		Err: err,
	}
}

// isIOError reports whether err is SQLite's I/O error (any extended code,
// 4874 among them) or "database or disk is full", or the system's "no space
// left on device".
func isIOError(err error) bool {
	if errors.Is(err, syscall.ENOSPC) {
		return true
	}
	var se *sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	primary := se.Code() & 0xff
	return primary == sqlite3lib.SQLITE_IOERR || primary == sqlite3lib.SQLITE_FULL
}

// bytesString writes n in the largest binary unit it reaches.
func bytesString(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

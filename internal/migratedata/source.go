package migratedata

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/licentia/licentia/internal/licentia"
)

// walState is what shows a commit to a SQLite database in WAL mode: a
// commit appends frames to the -wal file, and a WAL started over has new
// salts and checksums in its 32-byte header.
type walState struct {
	size   int64
	header [32]byte
}

// readWAL reads the state of the WAL of the database at path. A missing
// WAL is an empty one: no commit has used it.
func readWAL(path string) (walState, error) {
	var s walState
	f, err := os.Open(path + "-wal")
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read the WAL of %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return s, fmt.Errorf("read the WAL of %s: %w", path, err)
	}
	s.size = st.Size()
	// A WAL shorter than its header is one no commit has used.
	if _, err := io.ReadFull(f, s.header[:]); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return s, fmt.Errorf("read the WAL of %s: %w", path, err)
	}
	return s, nil
}

// unchanged refuses when the WAL of the database at path is no longer as
// it was when the copy began. The copy holds the write lock, so only a
// writer that SQLite's locks do not reach (another path to the file, a
// file system whose locks do not work) can get here; its writes would be
// lost with the move.
func unchanged(path string, began walState) error {
	now, err := readWAL(path)
	if err != nil {
		return err
	}
	if now == began {
		return nil
	}
	return licentia.Errorf(licentia.CodeDatabaseInUse, "the SQLite database %s was written to while it was copied "+
		"(its WAL was %d bytes, and is %d), though migrate-data held its write lock: a process writes to it without "+
		"SQLite's locks. Stop every process using it and run migrate-data again. No data was written to PostgreSQL.",
		path, began.size, now.size)
}

// lockError explains a failure to take the write lock of the database at
// path: another process holding it past the busy timeout is in use.
func lockError(path string, err error) error {
	var se *sqlite3.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3lib.SQLITE_BUSY {
		return licentia.Errorf(licentia.CodeDatabaseInUse, "another process kept the SQLite database %s locked for writing "+
			"for 10 seconds. Stop every process using it and run migrate-data again. No data was written to PostgreSQL.", path)
	}
	return fmt.Errorf("lock %s for writing: %w", path, err)
}

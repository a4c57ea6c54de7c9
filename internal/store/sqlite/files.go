package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The database holds customer emails and API key hashes: its directory and
// files are for the service's own user alone.
const (
	dirMode  fs.FileMode = 0o700
	fileMode fs.FileMode = 0o600
)

// companions are the files SQLite keeps beside the database file.
var companions = []string{"-wal", "-shm", "-journal"}

// Files is what Protect did to the database's directory and files.
type Files struct {
	// Tightened lists the files that other users could read or write and
	// that are now 0600.
	Tightened []string
	// Unsafe lists what Protect left within other users' reach: the
	// directory, when others may write in it (they could replace the
	// database, or plant a -wal file SQLite would replay; it may hold more
	// than the database, so its mode is left as it is), and files whose
	// mode could not be changed.
	Unsafe []string
}

// Protect makes the database at path readable by its owner only. It creates
// a missing directory 0700 and a missing database file 0600: SQLite gives
// the -wal and -shm files it creates the mode of the database file, so
// they are 0600 too, without changing the process umask. Files of an
// existing database that others could read are tightened to 0600. A
// directory others may only read and list is fine: the files in it are
// private. Open calls Protect; the commands call it first as well, to warn
// about what it reports.
func Protect(path string) (Files, error) {
	var f Files
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return f, diskFull(path, fmt.Errorf("protect sqlite %s: %w", path, err))
		}
	case err != nil:
		return f, fmt.Errorf("protect sqlite %s: %w", path, err)
	case info.Mode().Perm()&0o022 != 0:
		f.Unsafe = append(f.Unsafe, dir)
	}
	db, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return f, diskFull(path, fmt.Errorf("protect sqlite %s: %w", path, err))
	}
	if err := db.Close(); err != nil {
		return f, fmt.Errorf("protect sqlite %s: %w", path, err)
	}
	for _, name := range append([]string{path}, companionsOf(path)...) {
		tightened, err := tighten(name)
		switch {
		case err != nil:
			f.Unsafe = append(f.Unsafe, name)
		case tightened:
			f.Tightened = append(f.Tightened, name)
		}
	}
	return f, nil
}

func companionsOf(path string) []string {
	out := make([]string, len(companions))
	for i, s := range companions {
		out[i] = path + s
	}
	return out
}

// tighten takes every permission of group and others off the file at
// name, and reports whether there were any. A missing file is no error.
func tighten(name string) (bool, error) {
	info, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	perm := info.Mode().Perm()
	if perm&0o077 == 0 {
		return false, nil
	}
	if err := os.Chmod(name, perm&fileMode); err != nil {
		return false, err
	}
	return true, nil
}

// Package backup copies a SQLite database while the service writes to it,
// and puts such a copy back in place of an empty one. For PostgreSQL, whose
// copies pg_dump makes, it reads what an archive holds and what a target
// database holds before pg_restore runs.
package backup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	// The driver registers itself as "sqlite"; the store opens it too.
	_ "modernc.org/sqlite"

	"github.com/licentia/licentia/internal/store"
)

// Contents is what a database file holds, read from the file itself.
type Contents struct {
	// MasterKeyFingerprint names the master key the file's secrets are
	// sealed under; "" when no key was ever recorded.
	MasterKeyFingerprint string
	Licences, Products   int64
}

// sqliteHeader opens every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

func open(path string, readOnly bool) (*sql.DB, error) {
	// A busy timeout lets a snapshot wait for the writer of a running
	// service instead of failing.
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(10000)"
	if readOnly {
		dsn += "&mode=ro"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// Snapshot writes a consistent copy of the database at src to dest with
// VACUUM INTO, which reads one transaction's view of the database while
// the service goes on writing. The copy is made in a temporary file beside
// dest, synced, and renamed over dest, so dest is either absent, the
// previous file, or a whole snapshot. It returns the size of dest.
//
// progress, when not nil, is called a few times a second with the bytes
// written so far and the bytes the database's used pages take, which the
// copy comes close to.
func Snapshot(ctx context.Context, src, dest string, progress func(written, total int64)) (int64, error) {
	if _, err := os.Stat(src); err != nil {
		return 0, fmt.Errorf("backup: database %s: %w", src, err)
	}
	dir := filepath.Dir(dest)
	f, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".*.tmp")
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	tmp := f.Name()
	f.Close()
	// VACUUM INTO wants a file that does not exist yet; the name was only
	// reserved.
	if err := os.Remove(tmp); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp)
	db, err := open(src, false)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	var total int64
	err = db.QueryRowContext(ctx, `SELECT (page_count - freelist_count) * page_size
		FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`).Scan(&total)
	if err == nil {
		err = watchSize(tmp, total, progress, func() error {
			_, err := db.ExecContext(ctx, `VACUUM INTO ?`, tmp)
			return err
		})
	}
	if err = errors.Join(err, db.Close()); err != nil {
		return 0, fmt.Errorf("backup: snapshot of %s: %w", src, err)
	}
	size, err := syncFile(tmp)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	return size, syncDir(dir)
}

// watchSize runs write, telling progress how large the file at path has
// grown a few times a second meanwhile.
func watchSize(path string, total int64, progress func(written, total int64), write func() error) error {
	if progress == nil {
		return write()
	}
	done := make(chan error, 1)
	go func() { done <- write() }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			if st, err := os.Stat(path); err == nil {
				progress(st.Size(), max(total, st.Size()))
			}
		}
	}
}

// syncFile narrows the file to its owner and flushes it to the disk.
func syncFile(path string) (int64, error) {
	if err := os.Chmod(path, 0o600); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	err = f.Sync()
	st, serr := f.Stat()
	if err = errors.Join(err, serr, f.Close()); err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// syncDir makes a rename in dir survive a power loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// Inspect reads what the backup file at path holds, after checking that it
// is a whole SQLite database of this service.
func Inspect(ctx context.Context, path string) (*Contents, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("backup file %s: %w", path, err)
	}
	head := make([]byte, len(sqliteHeader))
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || string(head) != sqliteHeader {
		return nil, fmt.Errorf("backup file %s is not a SQLite database", path)
	}
	db, err := open(path, true)
	if err != nil {
		return nil, fmt.Errorf("backup file %s: %w", path, err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil || check != "ok" {
		return nil, fmt.Errorf("backup file %s is damaged: %v%s", path, err, check)
	}
	return contents(ctx, db, path)
}

func contents(ctx context.Context, db *sql.DB, path string) (*Contents, error) {
	var c Contents
	err := db.QueryRowContext(ctx, `SELECT coalesce((SELECT value FROM settings WHERE name = ?), ''),
		(SELECT count(*) FROM licences), (SELECT count(*) FROM products)`, store.SettingMasterKeyFingerprint).
		Scan(&c.MasterKeyFingerprint, &c.Licences, &c.Products)
	if err != nil {
		return nil, fmt.Errorf("%s is not a database of this service: %w", path, err)
	}
	return &c, nil
}

// HoldsData says whether the database file at path holds any row of the
// service's data. An absent or empty file, or a database that was only
// migrated (or started once, recording its master key), may be replaced.
func HoldsData(ctx context.Context, path string) (bool, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if st.Size() == 0 {
		return false, nil
	}
	db, err := open(path, true)
	if err != nil {
		return true, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('goose_db_version', 'settings')`)
	if err != nil {
		// Something is there that is no database: keep it.
		return true, nil
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return true, err
		}
		tables = append(tables, name)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return true, err
	}
	for _, name := range tables {
		var found bool
		q := `SELECT EXISTS (SELECT 1 FROM "` + strings.ReplaceAll(name, `"`, `""`) + `")`
		if err := db.QueryRowContext(ctx, q).Scan(&found); err != nil || found {
			return true, err
		}
	}
	return false, nil
}

// Install copies the backup file src to dest through a temporary file in
// dest's directory, synced, mode 0600, then renamed into place. Leftover
// journal files of an earlier empty database at dest are removed first,
// as SQLite would otherwise apply them to the copy. progress, when not
// nil, is told the bytes copied so far and the backup's size.
func Install(src, dest string, progress func(copied, total int64)) error {
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(dest + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restore: %w", err)
		}
	}
	dir := filepath.Dir(dest)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer in.Close()
	out, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".*.tmp")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	tmp := out.Name()
	defer os.Remove(tmp)
	var r io.Reader = in
	if progress != nil {
		st, err := in.Stat()
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		r = &countingReader{r: in, total: st.Size(), progress: progress}
	}
	_, err = io.Copy(out, r)
	if err == nil {
		err = out.Chmod(0o600)
	}
	if err == nil {
		err = out.Sync()
	}
	if err = errors.Join(err, out.Close()); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return syncDir(dir)
}

type countingReader struct {
	r        io.Reader
	n, total int64
	progress func(n, total int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.progress(c.n, c.total)
	return n, err
}

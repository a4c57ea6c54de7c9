// Package sqlite is the embedded storage engine: one SQLite file in WAL mode,
// one writer connection and a pool of readers.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/pressly/goose/v3"
	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/licentia/licentia/internal/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// readers is the size of the read pool.
const readers = 8

// statusReaders is the number of the status reads' connections: one a
// core, at least two and at most readers. A status read is short and
// never waits on a lock, so more connections than cores only take turns
// on them, each with a page cache of its own to keep warm: on two cores,
// two served more checks a second than eight, at less CPU each, in every
// pair of load runs (BENCHMARKS.md).
func statusReaders() int {
	return min(readers, max(2, runtime.GOMAXPROCS(0)))
}

// DB is the SQLite engine.
type DB struct {
	reader
	write     *sql.DB
	read      *sql.DB
	status    *statusReads
	writer    *groupWriter
	path      string
	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*DB)(nil)

// Open opens (creating if needed) the database file at path and applies any
// pending migrations. The database and its files are for their owner alone
// (see Protect). On a disk with no room left, the error says so (disk_full).
//
// Durability: WAL with synchronous=NORMAL. A committed change survives a
// crash of the process; a power loss may lose the last transactions but never
// corrupts the file.
func Open(ctx context.Context, path string) (*DB, error) {
	if _, err := Protect(path); err != nil {
		return nil, err
	}
	// Foreign keys are off by default in SQLite; the busy timeout makes a
	// second process (an operator command while serve runs) wait for the
	// writer instead of failing.
	pragmas := "_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + pragmas
	// The writer never checkpoints: the checkpointer does, off its path.
	// It keeps the savepoints of a group's members in memory.
	write, err := sql.Open("sqlite", dsn+"&_txlock=immediate&_pragma=wal_autocheckpoint(0)&_pragma=temp_store(MEMORY)")
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// One writer connection: SQLite allows one writer at a time, and
	// BEGIN IMMEDIATE takes the write lock up front so transactions never
	// deadlock upgrading a read lock.
	write.SetMaxOpenConns(1)
	read, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	ckpt, err := sql.Open("sqlite", dsn)
	if err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	ckpt.SetMaxOpenConns(1)
	statusDB, err := sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		read.Close()
		ckpt.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// Every reader stays open: database/sql keeps only two idle by
	// default, and a connection opened again re-reads the schema and
	// loses its prepared statements. The status reads hold theirs.
	read.SetMaxOpenConns(readers)
	read.SetMaxIdleConns(readers)
	statusConns := statusReaders()
	statusDB.SetMaxOpenConns(statusConns)
	statusDB.SetMaxIdleConns(statusConns)
	db := &DB{reader: reader{q: pool{read, newStmts(read)}}, write: write, read: read, path: path,
		status: newStatusReads(statusDB, statusConns), writer: newGroupWriter(write, newStmts(write), ckpt)}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, diskFull(path, err)
	}
	return db, nil
}

func (db *DB) migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db.write, sub)
	if err != nil {
		return fmt.Errorf("migrate sqlite: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate sqlite: %w", err)
	}
	return nil
}

// Close commits the transactions in progress, stops the checkpointer and
// closes the pools; the last connection to close checkpoints what remains.
// Only the first call does anything.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.writer.close()
		db.status.close()
		db.closeErr = errors.Join(db.writer.ckpt.close(), db.write.Close(), db.read.Close(), db.status.db.Close())
	})
	return db.closeErr
}

// Ping reports whether the database answers and its disk has room for
// writes. A full disk, the usual failure of a database in one file, leaves
// reads working while commits fail, so a read alone would call it healthy.
// A write probe would not tell either: SQLite first fills space the WAL
// file already holds, so a probe commits or fails by chance while the
// disk is full. The free space tells at once, and costs one system call.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.read.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return err
	}
	return checkRoom(filepath.Dir(db.path))
}

// InTx runs fn as one transaction on the writer connection, in a BEGIN
// IMMEDIATE transaction that it may share with others (see groupWriter):
// fn's changes are committed all together or not at all, and InTx returns
// nil only once they are committed.
func (db *DB) InTx(ctx context.Context, fn func(store.Tx) error) error {
	return db.writer.inTx(ctx, store.BeforeCommit(ctx, fn))
}

// queryer is what reads need: a pool or a transaction.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type reader struct{ q queryer }

type tx struct {
	reader
	tx txQueryer
}

var _ store.Tx = (*tx)(nil)

// isUnique reports whether err is a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	var se *sqlite3.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3lib.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3lib.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

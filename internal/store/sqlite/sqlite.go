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
	"os"
	"path/filepath"

	"github.com/pressly/goose/v3"
	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/licentia/licentia/internal/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// readers is the size of the read pool.
const readers = 8

// DB is the SQLite engine.
type DB struct {
	reader
	write      *sql.DB
	read       *sql.DB
	writeStmts *stmts
}

var _ store.Store = (*DB)(nil)

// Open opens (creating if needed) the database file at path and applies any
// pending migrations.
//
// Durability: WAL with synchronous=NORMAL. A committed change survives a
// crash of the process; a power loss may lose the last transactions but never
// corrupts the file.
func Open(ctx context.Context, path string) (*DB, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
	}
	// Foreign keys are off by default in SQLite; the busy timeout makes a
	// second process (an operator command while serve runs) wait for the
	// writer instead of failing.
	pragmas := "_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + pragmas
	write, err := sql.Open("sqlite", dsn+"&_txlock=immediate")
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
	// Every reader stays open: database/sql keeps only two idle by
	// default, and a connection opened again re-reads the schema and
	// loses its prepared statements.
	read.SetMaxOpenConns(readers)
	read.SetMaxIdleConns(readers)
	db := &DB{reader: reader{q: pool{read, newStmts(read)}}, write: write, read: read, writeStmts: newStmts(write)}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
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

// Close closes both pools.
func (db *DB) Close() error {
	return errors.Join(db.write.Close(), db.read.Close())
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.read.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// InTx runs fn in one BEGIN IMMEDIATE transaction on the writer connection.
func (db *DB) InTx(ctx context.Context, fn func(store.Tx) error) error {
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	// Deferred, the rollback also runs when fn panics or calls
	// runtime.Goexit, so the one writer connection is never left inside a
	// transaction; after a commit it does nothing.
	defer db.writeStmts.prepareWanted(ctx) // runs after the rollback below
	defer sqlTx.Rollback()
	q := txQueryer{sqlTx, db.writeStmts}
	if err := fn(&tx{reader: reader{q: q}, tx: q}); err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
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

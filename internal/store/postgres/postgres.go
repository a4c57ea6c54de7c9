// Package postgres is the PostgreSQL storage engine, through pgx: a
// connection pool shared by reads and transactions, and embedded migrations
// that several processes may apply at once.
//
// A statement that fails, a conflict included, aborts the whole transaction
// on PostgreSQL, unlike SQLite: a caller must return such an error, not
// carry on in the same transaction.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is the PostgreSQL engine.
type DB struct {
	reader
	pool   *pgxpool.Pool
	status *statusReads
	logger *slog.Logger
}

var _ store.Store = (*DB)(nil)

// defaultMaxConns is the pool's size when the URL sets none. pgx's own
// default, the number of CPUs but at least 4, starves a small machine: the
// activation routes and the webhook worker wait for connections while the
// database has CPU to spare. Connections open on demand.
const defaultMaxConns = 16

// defaultConnectTimeout bounds opening a connection, TCP and start-up
// together, when the URL sets no connect_timeout. pgx sets none: against a
// database that accepts but never answers (a network partition), a pool
// would wait forever for each connection it opens.
const defaultConnectTimeout = 5 * time.Second

// Open connects to the database at url (postgres://...) and applies any
// pending migrations. Parameters pgx knows, search_path among them, may be
// given in the URL's query; pool_max_conns defaults to defaultMaxConns and
// connect_timeout to defaultConnectTimeout.
func Open(ctx context.Context, url string) (*DB, error) {
	return open(ctx, url, nil)
}

// open is Open with tracer, when not nil, on every connection.
func open(ctx context.Context, url string, tracer pgx.QueryTracer) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	cfg.ConnConfig.Tracer = tracer
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	db := &DB{reader: reader{q: pool}, pool: pool, status: newStatusReads(pool)}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	// The advisory lock lets several processes start at once: one migrates,
	// the others wait and then find nothing pending. Probing every second
	// (goose's default is every 5) keeps that wait short.
	id, err := db.migrationLockID(ctx)
	if err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(id), lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, sub, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	return nil
}

// migrationLockID is the advisory lock of the migrations of the schema
// the connections work in. A search_path that names no schema there takes
// public's: the migrations then fail on it with PostgreSQL's own message.
func (db *DB) migrationLockID(ctx context.Context) (int64, error) {
	var schema string
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(current_schema(), 'public')`).Scan(&schema); err != nil {
		return 0, err
	}
	return migrationLock(schema), nil
}

// migrationLock is goose's own lock in public, which every version takes
// there, and a lock of its own in any other schema, so that stores in
// other schemas of the database (each test has one) do not wait a probe's
// second for each other.
func migrationLock(schema string) int64 {
	if schema == "public" {
		return lock.DefaultLockID
	}
	h := fnv.New64a()
	h.Write([]byte("licentia.migrations." + schema))
	return int64(h.Sum64())
}

// Close closes the pool.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.pool.Ping(ctx) }

// InTx runs fn in one READ COMMITTED transaction. Plan checks stay correct
// at this level because they first take LockOrganization's row lock, and
// each later statement sees what the previous holder committed.
//
// Every transaction takes its locks in one order, so no two wait for each
// other:
//
//  1. the organization's row (LockOrganization), by changes that check a
//     plan limit (issue, reinstate, new products, keys, endpoints);
//  2. the sweep lock, shared (lockSweepShared), before any licence or
//     counter; the sweeper takes it alone and no organization lock;
//  3. one licence's row (LockLicence); the sweeper, alone, the rows it
//     moves, by expiry and id;
//  4. that licence's activations;
//  5. licence_stats rows, once, in compareStatsRows order (apply);
//  6. last, inserts: the audit entry, the event, its deliveries.
//
// Inserts lock the rows they reference (FOR KEY SHARE: the organization,
// the licence, the webhook endpoint and the event). The row locks of steps
// 1 and 3 are FOR NO KEY UPDATE, which does not conflict with those, so an
// insert never waits for a holder of the organization or of a licence;
// FOR UPDATE would, and did deadlock (see LockOrganization).
//
// A transaction PostgreSQL still ends as a deadlock victim (40P01) or a
// serialization failure (40001) runs again from the start, up to
// txAttempts times: fn must be safe to run again, setting what it returns
// afresh on each run.
func (db *DB) InTx(ctx context.Context, fn func(store.Tx) error) error {
	fn = store.BeforeCommit(ctx, fn)
	for attempt := 1; ; attempt++ {
		err := db.runTx(ctx, fn)
		code, retry := retryable(err)
		if !retry || attempt == txAttempts {
			return err
		}
		db.log().Warn("transaction retried", "sqlstate", code, "attempt", attempt)
		t := time.NewTimer(txBackoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// txAttempts bounds the runs of one transaction: a second run almost always
// succeeds, and a cycle that keeps coming back is a bug to see, not to hide.
const txAttempts = 4

// txBackoff is how long to wait before run attempt+1: a random time up to
// 5ms, 10ms, 20ms..., so the transactions of a cycle do not meet again in
// step.
func txBackoff(attempt int) time.Duration {
	ceiling := 5 * time.Millisecond << (attempt - 1)
	return time.Duration(rand.Int64N(int64(ceiling))) + time.Millisecond
}

// retryable reports whether err ended a transaction that may succeed when
// run again, and its SQLSTATE.
func retryable(err error) (string, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return "", false
	}
	return pe.Code, pe.Code == "40P01" || pe.Code == "40001"
}

func (db *DB) runTx(ctx context.Context, fn func(store.Tx) error) error {
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	// Deferred, the rollback also runs when fn panics or calls
	// runtime.Goexit, so the connection always returns to the pool, out of
	// any transaction; after a commit there is nothing to roll back. A
	// cancelled ctx must not stop it.
	defer release(context.WithoutCancel(ctx), c)
	// The begin is held back like any statement whose answer is not read:
	// it goes with the transaction's first statement that needs one.
	p := inTx(c)
	if err := fn(&tx{reader: reader{q: p}, tx: p}); err != nil {
		return err
	}
	return p.commit(ctx)
}

// release rolls back the transaction c is still in, if any, and returns c
// to the pool, which closes a connection left in a transaction rather
// than lend it again.
func release(ctx context.Context, c *pgxpool.Conn) {
	if pc := c.Conn().PgConn(); !pc.IsClosed() && pc.TxStatus() != 'I' {
		c.Exec(ctx, "rollback")
	}
	c.Release()
}

// SetLogger sets where retried transactions are reported; nowhere until it
// is called. Call it before the store is used.
func (db *DB) SetLogger(l *slog.Logger) { db.logger = l }

func (db *DB) log() *slog.Logger {
	if db.logger == nil {
		return discard
	}
	return db.logger
}

var discard = slog.New(slog.DiscardHandler)

// queryer is what reads need: the pool or a transaction.
type queryer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type reader struct{ q queryer }

type tx struct {
	reader
	tx *pipe
	// The locks this transaction holds, so that taking one again costs no
	// round trip: the sweep lock, shared, and licences by org and id. Each
	// licence is kept as the transaction last read or wrote it (a
	// statement that writes a licence returns its row, or its change is
	// known beforehand: a held-back new seat), so a change whose answer
	// that row decides need not wait for one (see CreateActivation).
	sweepLocked bool
	licences    map[[2]string]licentia.Licence
	// mark is the sweep watermark as LockLicence read it, nil until then.
	mark *string
}

var _ store.Tx = (*tx)(nil)

// isUnique reports whether err is a unique or primary key violation.
func isUnique(err error) bool {
	_, ok := uniqueViolated(err)
	return ok
}

// uniqueViolated returns the constraint a unique or primary key violation
// broke, and whether err is one.
func uniqueViolated(err error) (string, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return pe.ConstraintName, true
	}
	return "", false
}

// isID reports whether s is a UUID in the lower-case form ids are stored in.
// Anything else is refused before it reaches a uuid column, which would fail
// the statement (and abort a transaction) instead of finding nothing; and
// SQLite, comparing text, finds nothing for an upper-case id either.
func isID(s string) bool {
	id, ok := licentia.ParseUUID(s)
	return ok && id == s
}

// isText reports whether s can be a text parameter. PostgreSQL refuses
// invalid UTF-8 and NUL bytes, failing the statement (and aborting a
// transaction); SQLite stores and compares them, so finds nothing for them.
// Text a caller gives to a read is checked first, and answers like a missing
// record.
func isText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// ms is how times are written: UTC at millisecond precision, what answers
// show and what SQLite keeps, so both engines compare and return the same.
func ms(t time.Time) time.Time { return licentia.TruncateMillis(t) }

func msPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := ms(*t)
	return &v
}

// utcPtr converts a time read back, which pgx gives in the local zone.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC()
	return &v
}

// collect reads every row with scan. It returns nil, not an empty slice,
// when there are none, as the SQLite engine does.
func collect[T any](rows pgx.Rows, scan func(pgx.Row) (*T, error)) ([]T, error) {
	return pgx.AppendRows([]T(nil), rows, func(row pgx.CollectableRow) (T, error) {
		v, err := scan(row)
		if err != nil {
			var zero T
			return zero, err
		}
		return *v, nil
	})
}

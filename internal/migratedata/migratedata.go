// Package migratedata moves a service's data from its SQLite database into
// an empty PostgreSQL database: every row of every table, as it stood at
// one moment, in one PostgreSQL transaction, so the target ends either
// empty or holding the whole copy.
//
// Both databases are first brought to this binary's migrations; the copy
// then pairs their tables column by column from the databases themselves,
// so a table added by a later migration is carried without a change here,
// and a schema the two engines disagree on stops the move before anything
// is written.
package migratedata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/sqlite"
)

// Options tune Copy.
type Options struct {
	// Progress, when set, is called before the first row, every few
	// thousand rows and after the last, with the rows copied and the rows
	// to copy.
	Progress func(done, total int64)
}

// Result is what was copied.
type Result struct {
	// Tables holds the rows copied into each table.
	Tables map[string]int64 `json:"tables"`
	Rows   int64            `json:"rows"`
	// MasterKeyFingerprint names the master key the copied secrets are
	// sealed under, as the SQLite database records it; "" when none.
	MasterKeyFingerprint string `json:"master_key_fingerprint"`
}

// progressEvery is how many rows are copied between progress calls.
const progressEvery = 4096

// Copy copies every row of the SQLite database at sqlitePath into the
// PostgreSQL database at postgresURL, which must hold no data: no row in
// any table but the settings, whose master key fingerprint, if any, must
// be the SQLite database's. Settings are carried over those the target
// has. The PostgreSQL tables are locked against writes from the emptiness
// check to the commit.
//
// A write to the source after the copy began would be in neither database
// once the service moves, so none may happen: Copy refuses
// (database_in_use) while a serve holds the source's lock file, holds
// SQLite's write lock on the source for the whole copy, and refuses
// should the source's WAL have changed all the same, before PostgreSQL
// commits.
func Copy(ctx context.Context, sqlitePath, postgresURL string, opts Options) (*Result, error) {
	// Opening the store would create a missing database.
	if st, err := os.Stat(sqlitePath); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	} else if st.Size() == 0 {
		return nil, fmt.Errorf("source: %s is empty", sqlitePath)
	}
	lock, err := sqlite.LockExclusive(sqlitePath, "migrate-data")
	if inUse, ok := errors.AsType[*sqlite.InUseError](err); ok {
		return nil, licentia.Errorf(licentia.CodeDatabaseInUse, "The SQLite database %s is in use by %s. Stop it, then run "+
			"migrate-data again: what it writes during the copy would be lost with the move. No data was written to PostgreSQL.",
			sqlitePath, inUse.Who())
	}
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	defer lock.Close()
	// Opening each store applies this binary's pending migrations.
	if err := migrateBoth(ctx, sqlitePath, postgresURL); err != nil {
		return nil, err
	}
	src, err := openSQLite(sqlitePath)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	conn, err := src.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", sqlitePath, err)
	}
	defer conn.Close()
	// One transaction: one snapshot of every table, and the write lock,
	// so that no other process (an operator command) commits meanwhile.
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return nil, lockError(sqlitePath, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
	began, err := readWAL(sqlitePath)
	if err != nil {
		return nil, err
	}

	pool, err := pgxpool.New(ctx, postgresURL)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer pool.Close()
	var res *Result
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		c := &copier{src: conn, dst: tx, opts: opts}
		var err error
		if res, err = c.run(ctx); err != nil {
			return err
		}
		// Checked before PostgreSQL commits, the write lock still held.
		return unchanged(sqlitePath, began)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func migrateBoth(ctx context.Context, sqlitePath, postgresURL string) error {
	lite, err := sqlite.Open(ctx, sqlitePath)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	if err := lite.Close(); err != nil {
		return fmt.Errorf("source: %w", err)
	}
	pg, err := postgres.Open(ctx, postgresURL)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	return pg.Close()
}

// openSQLite opens the database; a busy timeout lets it wait for a writer
// that holds the lock for a moment. It is opened for writing only to hold
// the write lock (a read-only connection takes none): the copy writes
// nothing, and rolls its transaction back.
func openSQLite(path string) (*sql.DB, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

type copier struct {
	src   *sql.Conn
	dst   pgx.Tx
	opts  Options
	done  int64
	total int64
}

func (c *copier) run(ctx context.Context) (*Result, error) {
	tables, err := plan(ctx, c.src, c.dst)
	if err != nil {
		return nil, err
	}
	if err := c.lockEmpty(ctx, tables); err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, t := range tables {
		var n int64
		if err := c.src.QueryRowContext(ctx, `SELECT count(*) FROM `+quote(t.name)).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", t.name, err)
		}
		counts[t.name] = n
		c.total += n
	}
	c.report()
	res := &Result{Tables: map[string]int64{}}
	for _, t := range tables {
		var n int64
		if t.name == "settings" {
			n, res.MasterKeyFingerprint, err = c.settings(ctx)
		} else {
			n, err = c.table(ctx, t)
		}
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", t.name, err)
		}
		if n != counts[t.name] {
			return nil, fmt.Errorf("copy %s: %d rows copied, the SQLite database holds %d", t.name, n, counts[t.name])
		}
		res.Tables[t.name] = n
		res.Rows += n
		if t.serial != "" {
			// The next key PostgreSQL hands out comes after the copied ones.
			if _, err := c.dst.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max(`+quote(t.serial)+`), 0) + 1, false)
				FROM `+quote(t.name), t.name, t.serial); err != nil {
				return nil, fmt.Errorf("copy %s: %w", t.name, err)
			}
		}
	}
	c.report()
	return res, nil
}

func (c *copier) report() {
	if c.opts.Progress != nil {
		c.opts.Progress(c.done, c.total)
	}
}

// lockEmpty locks every table against writes until the copy commits, then
// checks that none holds a row (but the settings).
func (c *copier) lockEmpty(ctx context.Context, tables []table) error {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = quote(t.name)
	}
	if _, err := c.dst.Exec(ctx, `LOCK TABLE `+strings.Join(names, ", ")+` IN EXCLUSIVE MODE`); err != nil {
		return fmt.Errorf("lock the PostgreSQL tables: %w", err)
	}
	for _, t := range tables {
		if t.name == "settings" {
			continue
		}
		var full bool
		if err := c.dst.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+quote(t.name)+`)`).Scan(&full); err != nil {
			return err
		}
		if full {
			return licentia.Errorf(licentia.CodeConflict,
				"the PostgreSQL database already holds data (table %s); move into an empty database", t.name)
		}
	}
	return nil
}

// settings carries the SQLite database's settings over the target's,
// refusing a target whose master key fingerprint is another key's.
func (c *copier) settings(ctx context.Context) (int64, string, error) {
	rows, err := c.src.QueryContext(ctx, `SELECT name, value FROM settings ORDER BY name`)
	if err != nil {
		return 0, "", err
	}
	defer rows.Close()
	var n int64
	var fingerprint string
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return 0, "", err
		}
		if name == store.SettingMasterKeyFingerprint {
			fingerprint = value
			var theirs string
			err := c.dst.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&theirs)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return 0, "", err
			}
			if theirs != "" && theirs != value {
				return 0, "", licentia.Errorf(licentia.CodeConflict,
					"the PostgreSQL database records master key %s, the SQLite database %s: move into a database that has not been started with another key", theirs, value)
			}
		}
		if _, err := c.dst.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value); err != nil {
			return 0, "", err
		}
		n++
		c.done++
	}
	return n, fingerprint, rows.Err()
}

// table copies one table with PostgreSQL's COPY, converting each value
// on the way.
func (c *copier) table(ctx context.Context, t table) (int64, error) {
	read := make([]string, len(t.columns))
	write := make([]string, len(t.columns))
	for i, col := range t.columns {
		write[i] = col.name
		read[i] = quote(col.name)
		if col.kind == kindRowID {
			read[i] = "rowid"
		}
	}
	rows, err := c.src.QueryContext(ctx, `SELECT `+strings.Join(read, ", ")+` FROM `+quote(t.name)+` ORDER BY rowid`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	s := &source{c: c, t: t, rows: rows, raw: make([]any, len(t.columns)), ptrs: make([]any, len(t.columns)),
		out: make([]any, len(t.columns))}
	for i := range s.raw {
		s.ptrs[i] = &s.raw[i]
	}
	n, err := c.dst.CopyFrom(ctx, pgx.Identifier{t.name}, write, s)
	if err != nil {
		return 0, err
	}
	c.report()
	return n, nil
}

// source feeds one table's SQLite rows to COPY.
type source struct {
	c    *copier
	t    table
	rows *sql.Rows
	raw  []any
	ptrs []any
	out  []any
	err  error
}

func (s *source) Next() bool {
	if !s.rows.Next() {
		return false
	}
	if s.err = s.rows.Scan(s.ptrs...); s.err != nil {
		return false
	}
	for i, col := range s.t.columns {
		v, err := convert(col.kind, s.raw[i])
		if err != nil {
			s.err = fmt.Errorf("column %s: %w", col.name, err)
			return false
		}
		s.out[i] = v
	}
	if s.c.done++; s.c.done%progressEvery == 0 {
		s.c.report()
	}
	return true
}

func (s *source) Values() ([]any, error) { return s.out, nil }

func (s *source) Err() error { return errors.Join(s.err, s.rows.Err()) }

// convert turns a value as SQLite holds it into the value PostgreSQL's
// column of kind k takes.
func convert(k kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case kindText:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case kindUUID:
		if x, ok := v.(string); ok {
			var u pgtype.UUID
			if err := u.Scan(x); err != nil {
				return nil, err
			}
			return u, nil
		}
	case kindTime:
		if x, ok := v.(int64); ok {
			return time.UnixMilli(x).UTC(), nil
		}
	case kindBool:
		if x, ok := v.(int64); ok && (x == 0 || x == 1) {
			return x == 1, nil
		}
	case kindInt, kindRowID:
		if x, ok := v.(int64); ok {
			return x, nil
		}
	case kindBytes:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	}
	return nil, fmt.Errorf("unexpected value of type %T", v)
}

func quote(name string) string { return pgx.Identifier{name}.Sanitize() }

package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver the store uses

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// sqliteSink writes through one connection of its own, as the store's one
// writer does, with durability traded for speed: synchronous=OFF means a
// power loss during the load may lose the last batches (a crash of the
// process loses nothing committed), which is acceptable for generated data.
//
// Each row is one run of a prepared single-row INSERT. A multi-row VALUES
// list is slower here: SQLite compiles it as a subquery, so each statement
// keeps a statement journal to be undone alone, and that journal costs more
// than the calls it saves.
type sqliteSink struct {
	db          *sql.DB
	conn        *sql.Conn
	licences    *sql.Stmt
	activations *sql.Stmt
}

func openSQLiteSink(ctx context.Context, path string) (*sqliteSink, error) {
	// The store has opened the file already, so it is in WAL mode and
	// migrated. Foreign keys stay checked; the large page cache keeps the
	// indexes of a million licences in memory while rows arrive in random
	// id order.
	pragmas := "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(OFF)&_pragma=cache_size(-1048576)&_pragma=temp_store(MEMORY)"
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+pragmas+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &sqliteSink{db: db}
	if err := s.prepare(ctx); err != nil {
		s.close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return s, nil
}

func (s *sqliteSink) prepare(ctx context.Context) error {
	var err error
	if s.conn, err = s.db.Conn(ctx); err != nil {
		return err
	}
	if s.licences, err = s.conn.PrepareContext(ctx, insertSQL("licences", licenceColumns)); err != nil {
		return err
	}
	s.activations, err = s.conn.PrepareContext(ctx, insertSQL("activations", activationColumns))
	return err
}

// insertSQL returns a single-row INSERT of columns.
func insertSQL(table, columns string) string {
	n := len(columnList(columns))
	return "INSERT INTO " + table + " (" + columns + ") VALUES (" + strings.Repeat("?, ", n-1) + "?)"
}

func (s *sqliteSink) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.licences, s.activations} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.conn != nil {
		errs = append(errs, s.conn.Close())
	}
	if err := errors.Join(append(errs, s.db.Close())...); err != nil {
		return fmt.Errorf("close sqlite: %w", err)
	}
	return nil
}

// write commits one batch. BEGIN IMMEDIATE takes the write lock first, so
// the watermark read inside cannot move before the batch commits: a sweep
// in a running service waits for it.
func (s *sqliteSink) write(ctx context.Context, ls []licentia.Licence, as []licentia.Activation) error {
	tx, err := s.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	var raw string
	err = tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, store.SettingSweepWatermark).Scan(&raw)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read sweep watermark: %w", err)
	}
	w, err := store.ParseWatermark(raw)
	if err != nil {
		return err
	}
	if err := s.writeLicences(ctx, tx, ls); err != nil {
		return fmt.Errorf("insert licences: %w", err)
	}
	if err := s.writeActivations(ctx, tx, as); err != nil {
		return fmt.Errorf("insert activations: %w", err)
	}
	upsert := fmt.Sprintf(statsUpsert, "?, ?, ?, ?, ?, ?, ?, ?, ?, ?")
	for _, c := range countRows(ls, w) {
		k := c.key
		_, err := tx.ExecContext(ctx, upsert, ls[0].OrgID, k.ProductID, string(k.Status), string(k.Source), string(k.Term),
			k.Trial, k.Lapsed, k.Shard, c.n, c.live)
		if err != nil {
			return fmt.Errorf("count licences: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (s *sqliteSink) writeLicences(ctx context.Context, tx *sql.Tx, ls []licentia.Licence) error {
	st := tx.StmtContext(ctx, s.licences)
	for i := range ls {
		l := &ls[i]
		_, err := st.ExecContext(ctx, l.ID, l.OrgID, l.ProductID, l.Email, strings.ToLower(l.Email),
			store.Millis(l.IssuedAt), store.MillisPtr(l.ExpiresAt), string(l.LimitKind), l.LimitCount, l.Major,
			string(l.Status), l.StatusReason, store.MillisPtr(l.StatusChangedAt), store.MillisPtr(l.TrialEndsAt),
			string(l.Source), l.ExternalRef, store.Millis(l.CreatedAt), store.Millis(l.UpdatedAt), l.LiveActivations)
		if err != nil {
			return fmt.Errorf("licence %s: %w", l.Email, err)
		}
	}
	return nil
}

func (s *sqliteSink) writeActivations(ctx context.Context, tx *sql.Tx, as []licentia.Activation) error {
	st := tx.StmtContext(ctx, s.activations)
	for i := range as {
		a := &as[i]
		_, err := st.ExecContext(ctx, a.ID, a.OrgID, a.LicenceID, a.MachineID, a.Label, a.OS, a.AppVersion,
			store.Millis(a.ActivatedAt), store.Millis(a.LastSeenAt), store.MillisPtr(a.DeactivatedAt))
		if err != nil {
			return fmt.Errorf("activation %s: %w", a.MachineID, err)
		}
	}
	return nil
}

// finish moves the write-ahead log into the database file and empties it,
// so the load leaves no log of its size behind.
func (s *sqliteSink) finish(ctx context.Context) error {
	if _, err := s.conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

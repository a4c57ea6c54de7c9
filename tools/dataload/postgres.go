package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
)

// postgresSink writes with COPY through one connection of its own.
type postgresSink struct {
	conn *pgx.Conn
}

func openPostgresSink(ctx context.Context, url string) (*postgresSink, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	return &postgresSink{conn: conn}, nil
}

func (s *postgresSink) close() error {
	return s.conn.Close(context.Background())
}

// write commits one batch. synchronous_commit is off for these
// transactions only: a crash of the server may lose the last batches, never
// corrupt anything, which is acceptable for generated data.
func (s *postgresSink) write(ctx context.Context, ls []licentia.Licence, as []licentia.Activation) error {
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(`+postgres.SweepLockKey+`)`); err != nil {
		return fmt.Errorf("lock licence sweep: %w", err)
	}
	var raw string
	err = tx.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, store.SettingSweepWatermark).Scan(&raw)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read sweep watermark: %w", err)
	}
	w, err := store.ParseWatermark(raw)
	if err != nil {
		return err
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"licences"}, columnList(licenceColumns), pgx.CopyFromSlice(len(ls), func(i int) ([]any, error) {
		l := &ls[i]
		return []any{l.ID, l.OrgID, l.ProductID, l.Email, strings.ToLower(l.Email),
			l.IssuedAt, l.ExpiresAt, string(l.LimitKind), l.LimitCount, l.Major,
			string(l.Status), l.StatusReason, l.StatusChangedAt, l.TrialEndsAt,
			string(l.Source), l.ExternalRef, l.CreatedAt, l.UpdatedAt, l.LiveActivations}, nil
	}))
	if err != nil {
		return fmt.Errorf("copy licences: %w", err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"activations"}, columnList(activationColumns), pgx.CopyFromSlice(len(as), func(i int) ([]any, error) {
		a := &as[i]
		return []any{a.ID, a.OrgID, a.LicenceID, a.MachineID, a.Label, a.OS, a.AppVersion,
			a.ActivatedAt, a.LastSeenAt, a.DeactivatedAt}, nil
	}))
	if err != nil {
		return fmt.Errorf("copy activations: %w", err)
	}
	upsert := fmt.Sprintf(statsUpsert, "$1, $2, $3, $4, $5, $6, $7, $8, $9, $10")
	for _, c := range countRows(ls, w) {
		k := c.key
		_, err := tx.Exec(ctx, upsert,
			ls[0].OrgID, k.ProductID, string(k.Status), string(k.Source), string(k.Term), k.Trial, k.Lapsed, k.Shard, c.n, c.live)
		if err != nil {
			return fmt.Errorf("count licences: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// finish vacuums and refreshes the planner's statistics, which would
// otherwise describe the tables before a million rows arrived until
// autovacuum catches up. The vacuum also sets the visibility map: without
// it the counts' range scans (issued and revoked since) read the table
// instead of their index only.
func (s *postgresSink) finish(ctx context.Context) error {
	if _, err := s.conn.Exec(ctx, `VACUUM (ANALYZE) licences, activations, licence_stats`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	return nil
}

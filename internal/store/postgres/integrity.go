package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/store"
)

// Snapshot runs fn in a read-only REPEATABLE READ transaction: every read
// sees the database as of its first, and writers are not blocked.
func (db *DB) Snapshot(ctx context.Context, fn func(r store.Reader) error) error {
	ro, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin snapshot: %w", err)
	}
	defer ro.Rollback(context.WithoutCancel(ctx))
	if err := fn(reader{q: ro}); err != nil {
		return err
	}
	return ro.Commit(ctx)
}

func (r reader) LicencesAfter(ctx context.Context, after string, limit int) ([]store.CheckedLicence, error) {
	q := `SELECT ` + licenceColumns + `,
		(SELECT count(*) FROM activations a WHERE a.licence_id = licences.id AND a.deactivated_at IS NULL)
		FROM licences`
	args := []any{limit}
	// Ids are uuids, which order as their text does; "" is no uuid.
	if after != "" {
		if !isID(after) {
			return nil, fmt.Errorf("list licences: %q is not a licence id", after)
		}
		q += ` WHERE id > $2`
		args = append(args, after)
	}
	rows, err := r.q.Query(ctx, q+` ORDER BY id LIMIT $1`, args...)
	if err != nil {
		return nil, fmt.Errorf("list licences: %w", err)
	}
	out, err := collect(rows, func(row pgx.Row) (*store.CheckedLicence, error) {
		var live int64
		l, err := scanLicence(store.ScanWith{Row: row, Extra: []any{&live}})
		if err != nil {
			return nil, err
		}
		return &store.CheckedLicence{Licence: *l, LiveRows: live}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list licences: %w", err)
	}
	return out, nil
}

func (r reader) LicenceStats(ctx context.Context) ([]store.StatsRow, error) {
	rows, err := r.q.Query(ctx, `SELECT org_id, product_id, status, source, term, trial, lapsed, shard, n, live
		FROM licence_stats WHERE n <> 0 OR live <> 0 ORDER BY org_id, product_id, status, source, term, trial, lapsed, shard`)
	if err != nil {
		return nil, fmt.Errorf("list licence counters: %w", err)
	}
	out, err := collect(rows, func(row pgx.Row) (*store.StatsRow, error) {
		var s store.StatsRow
		err := row.Scan(&s.OrgID, &s.ProductID, &s.Status, &s.Source, &s.Term, &s.Trial, &s.Lapsed, &s.Shard, &s.N, &s.Live)
		return &s, err
	})
	if err != nil {
		return nil, fmt.Errorf("list licence counters: %w", err)
	}
	return out, nil
}

// orphanQueries find rows whose parent is missing. A licence's product
// must also be its organization's.
var orphanQueries = []struct{ kind, query string }{
	{store.OrphanLicence, `SELECT l.id::text, l.product_id FROM licences l
		WHERE NOT EXISTS (SELECT 1 FROM products p WHERE p.id = l.product_id AND p.org_id = l.org_id) ORDER BY l.id LIMIT $1`},
	{store.OrphanActivation, `SELECT a.id::text, a.licence_id::text FROM activations a
		WHERE NOT EXISTS (SELECT 1 FROM licences l WHERE l.id = a.licence_id) ORDER BY a.id LIMIT $1`},
	{store.OrphanDelivery, `SELECT d.id::text, d.event_id::text FROM webhook_deliveries d
		WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id) ORDER BY d.id LIMIT $1`},
}

func (r reader) Orphans(ctx context.Context, limit int) ([]store.Orphan, error) {
	var out []store.Orphan
	for _, q := range orphanQueries {
		rows, err := r.q.Query(ctx, q.query, limit)
		if err != nil {
			return nil, fmt.Errorf("find orphan %ss: %w", q.kind, err)
		}
		found, err := collect(rows, func(row pgx.Row) (*store.Orphan, error) {
			o := store.Orphan{Kind: q.kind}
			err := row.Scan(&o.ID, &o.ParentID)
			return &o, err
		})
		if err != nil {
			return nil, fmt.Errorf("find orphan %ss: %w", q.kind, err)
		}
		out = append(out, found...)
	}
	return out, nil
}

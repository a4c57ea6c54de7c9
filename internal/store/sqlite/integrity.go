package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/licentia/licentia/internal/store"
)

// Snapshot runs fn in a read transaction of the read pool: in WAL mode it
// sees the database as of its first read and never blocks the writer.
func (db *DB) Snapshot(ctx context.Context, fn func(r store.Reader) error) error {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin snapshot: %w", err)
	}
	defer tx.Rollback()
	if err := fn(reader{q: tx}); err != nil {
		return err
	}
	return tx.Commit()
}

func (r reader) LicencesAfter(ctx context.Context, after string, limit int) ([]store.CheckedLicence, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+licenceColumns+`,
		(SELECT count(*) FROM activations a WHERE a.licence_id = licences.id AND a.deactivated_at IS NULL)
		FROM licences WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list licences: %w", err)
	}
	defer rows.Close()
	var out []store.CheckedLicence
	for rows.Next() {
		var live int64
		l, err := scanLicence(store.ScanWith{Row: rows, Extra: []any{&live}})
		if err != nil {
			return nil, fmt.Errorf("list licences: %w", err)
		}
		out = append(out, store.CheckedLicence{Licence: *l, LiveRows: live})
	}
	return out, rows.Err()
}

func (r reader) LicenceStats(ctx context.Context) ([]store.StatsRow, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT org_id, product_id, status, source, term, trial, lapsed, shard, n, live
		FROM licence_stats WHERE n <> 0 OR live <> 0 ORDER BY org_id, product_id, status, source, term, trial, lapsed, shard`)
	if err != nil {
		return nil, fmt.Errorf("list licence counters: %w", err)
	}
	defer rows.Close()
	var out []store.StatsRow
	for rows.Next() {
		var s store.StatsRow
		if err := rows.Scan(&s.OrgID, &s.ProductID, &s.Status, &s.Source, &s.Term, &s.Trial, &s.Lapsed, &s.Shard, &s.N, &s.Live); err != nil {
			return nil, fmt.Errorf("list licence counters: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// orphanQueries find rows whose parent is missing. A licence's product
// must also be its organization's.
var orphanQueries = []struct{ kind, query string }{
	{store.OrphanLicence, `SELECT l.id, l.product_id FROM licences l
		WHERE NOT EXISTS (SELECT 1 FROM products p WHERE p.id = l.product_id AND p.org_id = l.org_id) ORDER BY l.id LIMIT ?`},
	{store.OrphanActivation, `SELECT a.id, a.licence_id FROM activations a
		WHERE NOT EXISTS (SELECT 1 FROM licences l WHERE l.id = a.licence_id) ORDER BY a.id LIMIT ?`},
	{store.OrphanDelivery, `SELECT d.id, d.event_id FROM webhook_deliveries d
		WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id) ORDER BY d.id LIMIT ?`},
}

func (r reader) Orphans(ctx context.Context, limit int) ([]store.Orphan, error) {
	var out []store.Orphan
	for _, q := range orphanQueries {
		rows, err := r.q.QueryContext(ctx, q.query, limit)
		if err != nil {
			return nil, fmt.Errorf("find orphan %ss: %w", q.kind, err)
		}
		for rows.Next() {
			o := store.Orphan{Kind: q.kind}
			if err := rows.Scan(&o.ID, &o.ParentID); err != nil {
				rows.Close()
				return nil, fmt.Errorf("find orphan %ss: %w", q.kind, err)
			}
			out = append(out, o)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("find orphan %ss: %w", q.kind, err)
		}
	}
	return out, nil
}

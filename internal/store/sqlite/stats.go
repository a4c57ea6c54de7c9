package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// bump adds n licences and live activations to the counters of key.
func (t *tx) bump(ctx context.Context, orgID string, k store.StatsKey, n, live int64) error {
	if n == 0 && live == 0 {
		return nil
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO licence_stats (org_id, product_id, status, source, term, trial, lapsed, shard, n, live)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (org_id, product_id, status, source, term, trial, lapsed, shard)
		DO UPDATE SET n = n + excluded.n, live = live + excluded.live`,
		orgID, k.ProductID, k.Status, k.Source, k.Term, k.Trial, k.Lapsed, k.Shard, n, live)
	if err != nil {
		return fmt.Errorf("count licences: %w", err)
	}
	return nil
}

// move takes a licence with its live activations off one counter row and
// onto another.
func (t *tx) move(ctx context.Context, orgID string, from store.StatsKey, fromLive int64, to store.StatsKey, toLive int64) error {
	if from == to {
		return t.bump(ctx, orgID, to, 0, toLive-fromLive)
	}
	if err := t.bump(ctx, orgID, from, -1, -fromLive); err != nil {
		return err
	}
	return t.bump(ctx, orgID, to, 1, toLive)
}

func (r reader) statsGroups(ctx context.Context, orgID string, productID *string) ([]store.StatsGroup, error) {
	q := `SELECT status, source, term, trial, lapsed, sum(n), sum(live) FROM licence_stats WHERE org_id = ?`
	args := []any{orgID}
	if productID != nil {
		q += ` AND product_id = ?`
		args = append(args, *productID)
	}
	rows, err := r.q.QueryContext(ctx, q+` GROUP BY status, source, term, trial, lapsed`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.StatsGroup
	for rows.Next() {
		var g store.StatsGroup
		if err := rows.Scan(&g.Status, &g.Source, &g.Term, &g.Trial, &g.Lapsed, &g.N, &g.Live); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// expiryWindow lists the stored-active licences expiring in (lo, hi].
func (r reader) expiryWindow(ctx context.Context, orgID string, productID *string, lo, hi time.Time) ([]licentia.Licence, error) {
	q := `SELECT ` + licenceColumns + ` FROM licences
		WHERE org_id = ? AND status = 'active' AND expires_at IS NOT NULL AND expires_at > ? AND expires_at <= ?`
	args := []any{orgID, store.Millis(lo), store.Millis(hi)}
	if productID != nil {
		q += ` AND product_id = ?`
		args = append(args, *productID)
	}
	return r.queryLicences(ctx, q, args...)
}

func (r reader) tally(ctx context.Context, orgID string, productID *string, now time.Time) (store.LicenceCounts, error) {
	w, err := r.watermark(ctx)
	if err != nil {
		return store.LicenceCounts{}, err
	}
	groups, err := r.statsGroups(ctx, orgID, productID)
	if err != nil {
		return store.LicenceCounts{}, err
	}
	lo, hi := store.Window(w, now)
	window, err := r.expiryWindow(ctx, orgID, productID, lo, hi)
	if err != nil {
		return store.LicenceCounts{}, err
	}
	return store.Tally(groups, window, w, now), nil
}

// snapshot runs fn on one view of the database, for reads made of several
// statements that must agree with each other (counters, the watermark and
// the licences expiring past it). On the read pool each statement would see
// the latest commit, so a sweep committing between them would count its
// licences twice; fn runs in a read transaction there. The writer's
// transaction already sees only its own changes.
func (r reader) snapshot(ctx context.Context, fn func(r reader) error) error {
	db, ok := r.q.(*sql.DB)
	if !ok {
		return fn(r)
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(reader{q: tx}); err != nil {
		return err
	}
	return tx.Commit()
}

// sinceSQL counts the licences issued, and revoked, since :since, of the
// organization :org or, with product, of its product :product. Each count
// is one range of an index that holds every column it reads
// (licences_by_issue, licences_revoked, and with a product
// licences_by_product_list, licences_product_revoked), so it never reads
// the licences themselves.
func sinceSQL(product bool) string {
	and := ""
	if product {
		and = " AND product_id = :product"
	}
	return `SELECT
		(SELECT count(*) FROM licences WHERE org_id = :org AND issued_at >= :since` + and + `),
		(SELECT count(*) FROM licences WHERE org_id = :org AND status = 'revoked' AND status_changed_at >= :since` + and + `)`
}

func (r reader) CountLicences(ctx context.Context, orgID string, productID *string, since, now time.Time) (*store.LicenceCounts, error) {
	var c store.LicenceCounts
	err := r.snapshot(ctx, func(r reader) error {
		var err error
		if c, err = r.tally(ctx, orgID, productID, now); err != nil {
			return err
		}
		args := []any{sql.Named("org", orgID), sql.Named("since", store.Millis(since))}
		if productID != nil {
			args = append(args, sql.Named("product", *productID))
		}
		return r.q.QueryRowContext(ctx, sinceSQL(productID != nil), args...).Scan(&c.IssuedSince, &c.RevokedSince)
	})
	if err != nil {
		return nil, fmt.Errorf("count licences: %w", err)
	}
	return &c, nil
}

func (r reader) PlanLicenceCount(ctx context.Context, orgID string, now time.Time) (int64, error) {
	var n int64
	err := r.snapshot(ctx, func(r reader) error {
		c, err := r.tally(ctx, orgID, nil, now)
		if err != nil {
			return err
		}
		// Subscription licences keep their place for 30 days after the
		// subscription ends, unless they are counted already.
		var grace int64
		err = r.q.QueryRowContext(ctx, `SELECT count(*) FROM licences
			WHERE org_id = :org AND subscription_ended_at IS NOT NULL AND subscription_ended_at > :since
			AND NOT `+store.StateSQL(licentia.StateActive, ":now")+` AND NOT `+store.StateSQL(licentia.StateTrial, ":now"),
			sql.Named("org", orgID), sql.Named("since", store.Millis(now.Add(-licentia.SubscriptionGrace))), sql.Named("now", store.Millis(now))).Scan(&grace)
		n = c.Active + c.Trial + grace
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count plan licences: %w", err)
	}
	return n, nil
}

// SweepLicences moves licences whose expiry passed since the watermark to
// their lapsed counters, oldest expiry first, and advances the watermark.
func (t *tx) SweepLicences(ctx context.Context, now time.Time, batch int) (int, error) {
	if batch < 1 {
		return 0, fmt.Errorf("sweep licences: batch %d is not positive", batch)
	}
	w, err := t.watermark(ctx)
	if err != nil {
		return 0, err
	}
	if !now.After(w) {
		return 0, nil
	}
	ls, err := t.queryLicences(ctx, `SELECT `+licenceColumns+` FROM licences
		WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at > ? AND expires_at <= ?
		ORDER BY expires_at, id LIMIT ?`, store.Millis(w), store.Millis(now), batch)
	if err != nil {
		return 0, fmt.Errorf("sweep licences: %w", err)
	}
	to := now
	if len(ls) == batch {
		// More may expire at the instant of the last one: stop just before
		// it, or, when the whole batch shares that instant, take all of it.
		last := *ls[len(ls)-1].ExpiresAt
		to = last.Add(-time.Millisecond)
		if !to.After(w) {
			to = last
			ls, err = t.queryLicences(ctx, `SELECT `+licenceColumns+` FROM licences
				WHERE status = 'active' AND expires_at = ?`, store.Millis(last))
			if err != nil {
				return 0, fmt.Errorf("sweep licences: %w", err)
			}
		}
	}
	moved := 0
	for i := range ls {
		l := &ls[i]
		if l.ExpiresAt.After(to) {
			continue
		}
		if err := t.move(ctx, l.OrgID, store.KeyOf(l, w), l.LiveActivations, store.KeyOf(l, to), l.LiveActivations); err != nil {
			return 0, err
		}
		moved++
	}
	if err := t.SetSetting(ctx, store.SettingSweepWatermark, strconv.FormatInt(store.Millis(to), 10)); err != nil {
		return 0, err
	}
	return moved, nil
}

package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// The sweep lock keeps the sweeper apart from every transaction that locks
// or changes a licence or its counters. Such a transaction takes it in
// shared mode before its first licence or counter lock; the sweeper takes
// it alone. Row locks alone would not do: a licence that a concurrent
// change brings into the sweep's range (a reinstate, a new expiry) is not
// among the rows the sweeper selected and locked, so the change would count
// it under the old watermark while the sweep moves the watermark past its
// expiry, and it would stay in a stale row for good. Taking it first, the
// sweeper never waits for a row held by a transaction that waits for it. An
// advisory lock, unlike a shared row lock, queues new holders behind a
// waiting sweeper, so a steady stream of writers cannot starve it. The key
// includes the schema, so stores in other schemas of the database (tests)
// do not wait for each other. Bulk loaders writing licences take it shared
// too.
const SweepLockKey = `hashtextextended('licentia.licence_sweep.' || current_schema(), 0)`

const sweepLockShared = `SELECT pg_advisory_xact_lock_shared(` + SweepLockKey + `)`

func lockSweepShared(ctx context.Context, q queryer) error {
	if _, err := q.Exec(ctx, sweepLockShared); err != nil {
		return fmt.Errorf("lock licence sweep: %w", err)
	}
	return nil
}

// statsRow names one licence_stats row.
type statsRow struct {
	OrgID string
	store.StatsKey
}

type delta struct{ n, live int64 }

// deltas are changes of counter rows, applied together by apply.
type deltas map[statsRow]delta

func (d deltas) add(orgID string, k store.StatsKey, n, live int64) deltas {
	row := statsRow{orgID, k}
	v := d[row]
	d[row] = delta{v.n + n, v.live + live}
	return d
}

// apply upserts the changed rows in one order, the same in every
// transaction, so that two transactions each moving a licence, in opposite
// directions between the same rows, do not deadlock on each other's rows.
func (t *tx) apply(ctx context.Context, d deltas) error {
	rows := make([]statsRow, 0, len(d))
	for row, v := range d {
		if v != (delta{}) {
			rows = append(rows, row)
		}
	}
	slices.SortFunc(rows, compareStatsRows)
	for _, row := range rows {
		v := d[row]
		t.tx.later(`INSERT INTO licence_stats (org_id, product_id, status, source, term, trial, lapsed, shard, n, live)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (org_id, product_id, status, source, term, trial, lapsed, shard)
			DO UPDATE SET n = licence_stats.n + excluded.n, live = licence_stats.live + excluded.live`,
			row.OrgID, row.ProductID, string(row.Status), string(row.Source), string(row.Term), row.Trial, row.Lapsed, row.Shard, v.n, v.live)
	}
	return nil
}

func compareStatsRows(a, b statsRow) int {
	return cmp.Or(cmp.Compare(a.OrgID, b.OrgID), store.CompareStatsKeys(a.StatsKey, b.StatsKey))
}

// watermark is the sweep watermark as the transaction's LockLicence read
// it, or read now. Callers hold the sweep lock, so it cannot move before
// they commit.
func (t *tx) watermark(ctx context.Context) (time.Time, error) {
	if t.mark != nil {
		return store.ParseWatermark(*t.mark)
	}
	return t.reader.watermark(ctx)
}

// watermark reads the sweep watermark (the epoch before any sweep). Callers
// hold the sweep lock, so it cannot move before they commit.
func (r reader) watermark(ctx context.Context) (time.Time, error) {
	v, err := r.Setting(ctx, store.SettingSweepWatermark)
	if err != nil {
		return time.Time{}, err
	}
	return store.ParseWatermark(v)
}

// snapshot runs fn on one view of the database, for reads made of several
// statements that must agree with each other (counters, the watermark and
// the licences expiring past it). Outside a transaction fn runs in a
// read-only REPEATABLE READ transaction. Inside one, each statement sees
// what was committed before it began, so the shared sweep lock keeps a
// sweep from committing between them.
func (r reader) snapshot(ctx context.Context, fn func(r reader) error) error {
	pool, ok := r.q.(interface {
		BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error)
	})
	if !ok {
		if err := lockSweepShared(ctx, r.q); err != nil {
			return err
		}
		return fn(r)
	}
	ro, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer ro.Rollback(context.WithoutCancel(ctx))
	if err := fn(reader{q: ro}); err != nil {
		return err
	}
	return ro.Commit(ctx)
}

func scanStatsGroup(row pgx.Row) (*store.StatsGroup, error) {
	var g store.StatsGroup
	if err := row.Scan(&g.Status, &g.Source, &g.Term, &g.Trial, &g.Lapsed, &g.N, &g.Live); err != nil {
		return nil, err
	}
	return &g, nil
}

func (r reader) statsGroups(ctx context.Context, orgID string, productID *string) ([]store.StatsGroup, error) {
	rows, err := r.q.Query(ctx, `SELECT status, source, term, trial, lapsed, sum(n)::bigint, sum(live)::bigint
		FROM licence_stats WHERE org_id = $1 AND ($2::text IS NULL OR product_id = $2)
		GROUP BY status, source, term, trial, lapsed`, orgID, productID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanStatsGroup)
}

// expiryWindow lists the stored-active licences expiring in (lo, hi].
func (r reader) expiryWindow(ctx context.Context, orgID string, productID *string, lo, hi time.Time) ([]licentia.Licence, error) {
	return r.queryLicences(ctx, `SELECT `+licenceColumns+` FROM licences
		WHERE org_id = $1 AND status = 'active' AND expires_at IS NOT NULL AND expires_at > $2 AND expires_at <= $3
		AND ($4::text IS NULL OR product_id = $4)`, orgID, ms(lo), ms(hi), productID)
}

// tally must run inside snapshot.
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

// sinceSQL counts the licences issued, and revoked, since $2, of the
// organization $1 or, with product, of its product $3. They are two range
// counts, each on an index that holds every column it reads
// (licences_by_issue, licences_revoked, and with a product
// licences_by_product_list, licences_product_revoked), so they stay
// index-only once the visibility map is set; one pass with FILTER would
// read every licence of the organization.
func sinceSQL(product bool) string {
	and := ""
	if product {
		and = " AND product_id = $3"
	}
	return `SELECT
		(SELECT count(*) FROM licences WHERE org_id = $1 AND issued_at >= $2` + and + `),
		(SELECT count(*) FROM licences WHERE org_id = $1 AND status = 'revoked' AND status_changed_at >= $2` + and + `)`
}

func (r reader) CountLicences(ctx context.Context, orgID string, productID *string, since, now time.Time) (*store.LicenceCounts, error) {
	if !isID(orgID) || (productID != nil && !isText(*productID)) {
		return &store.LicenceCounts{}, nil
	}
	now = ms(now)
	var c store.LicenceCounts
	err := r.snapshot(ctx, func(r reader) error {
		var err error
		if c, err = r.tally(ctx, orgID, productID, now); err != nil {
			return err
		}
		args := []any{orgID, ms(since)}
		if productID != nil {
			args = append(args, *productID)
		}
		return r.q.QueryRow(ctx, sinceSQL(productID != nil), args...).Scan(&c.IssuedSince, &c.RevokedSince)
	})
	if err != nil {
		return nil, fmt.Errorf("count licences: %w", err)
	}
	return &c, nil
}

func (r reader) PlanLicenceCount(ctx context.Context, orgID string, now time.Time) (int64, error) {
	if !isID(orgID) {
		return 0, nil
	}
	now = ms(now)
	var n int64
	err := r.snapshot(ctx, func(r reader) error {
		c, err := r.tally(ctx, orgID, nil, now)
		if err != nil {
			return err
		}
		// Subscription licences keep their place for 30 days after the
		// subscription ends, unless they are counted already.
		var grace int64
		err = r.q.QueryRow(ctx, `SELECT count(*) FROM licences
			WHERE org_id = @org AND subscription_ended_at IS NOT NULL AND subscription_ended_at > @since
			AND NOT `+store.StateSQL(licentia.StateActive, "@now")+` AND NOT `+store.StateSQL(licentia.StateTrial, "@now"),
			pgx.NamedArgs{"org": orgID, "since": now.Add(-licentia.SubscriptionGrace), "now": now}).Scan(&grace)
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
// It takes the sweep lock alone, then the watermark row (so sweepers run one
// after the other) and the rows of the licences it moves.
func (t *tx) SweepLicences(ctx context.Context, now time.Time, batch int) (int, error) {
	if batch < 1 {
		return 0, fmt.Errorf("sweep licences: batch %d is not positive", batch)
	}
	now = ms(now)
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+SweepLockKey+`)`); err != nil {
		return 0, fmt.Errorf("sweep licences: %w", err)
	}
	w, err := t.lockWatermark(ctx)
	if err != nil {
		return 0, err
	}
	if !now.After(w) {
		return 0, nil
	}
	ls, err := t.queryLicences(ctx, `SELECT `+licenceColumns+` FROM licences
		WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at > $1 AND expires_at <= $2
		ORDER BY expires_at, id LIMIT $3 FOR NO KEY UPDATE`, w, now, batch)
	if err != nil {
		return 0, fmt.Errorf("sweep licences: %w", err)
	}
	to := now
	if len(ls) == batch {
		// More may expire at the instant of the last one: stop just before
		// it, or, when the whole batch shares that instant, take all of it,
		// so licences expiring at one instant are never split across sweeps.
		last := *ls[len(ls)-1].ExpiresAt
		to = last.Add(-time.Millisecond)
		if !to.After(w) {
			to = last
			ls, err = t.queryLicences(ctx, `SELECT `+licenceColumns+` FROM licences
				WHERE status = 'active' AND expires_at = $1 ORDER BY id FOR NO KEY UPDATE`, last)
			if err != nil {
				return 0, fmt.Errorf("sweep licences: %w", err)
			}
		}
	}
	d, moved := deltas{}, 0
	for i := range ls {
		l := &ls[i]
		if l.ExpiresAt.After(to) {
			continue
		}
		d.add(l.OrgID, store.KeyOf(l, w), -1, -l.LiveActivations)
		d.add(l.OrgID, store.KeyOf(l, to), 1, l.LiveActivations)
		moved++
	}
	if err := t.apply(ctx, d); err != nil {
		return 0, err
	}
	if err := t.SetSetting(ctx, store.SettingSweepWatermark, strconv.FormatInt(store.Millis(to), 10)); err != nil {
		return 0, err
	}
	return moved, nil
}

// lockWatermark reads the watermark under its row lock, inserting the row
// first when no sweep has run yet.
func (t *tx) lockWatermark(ctx context.Context) (time.Time, error) {
	_, err := t.tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, '0') ON CONFLICT DO NOTHING`,
		store.SettingSweepWatermark)
	if err != nil {
		return time.Time{}, fmt.Errorf("sweep licences: %w", err)
	}
	var v string
	err = t.tx.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1 FOR UPDATE`, store.SettingSweepWatermark).Scan(&v)
	if err != nil {
		return time.Time{}, fmt.Errorf("sweep licences: %w", err)
	}
	return store.ParseWatermark(v)
}

package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/store"
)

// leasesQuery lists expired leases: now in milliseconds, then the limit.
const leasesQuery = `SELECT a.org_id, a.licence_id, a.id FROM products p
	CROSS JOIN licences l CROSS JOIN activations a
	WHERE p.heartbeat_interval_seconds IS NOT NULL
		AND l.org_id = p.org_id AND l.product_id = p.id
		AND a.licence_id = l.id AND a.deactivated_at IS NULL
		AND a.last_seen_at < ? - p.heartbeat_interval_seconds * 2000
	ORDER BY a.last_seen_at, a.id LIMIT ?`

// ExpiredLeases walks the products with an interval (products_heartbeat),
// their licences (licences_by_product_list) and the live activations of each
// seen before the cut (activations_live_seen): other products' activations
// are never read. CROSS JOIN keeps SQLite to that order: by the tables'
// statistics alone it may prefer reading every live activation.
func (r reader) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]store.Lease, error) {
	rows, err := r.q.QueryContext(ctx, leasesQuery, store.Millis(now), limit)
	if err != nil {
		return nil, fmt.Errorf("expired leases: %w", err)
	}
	defer rows.Close()
	var out []store.Lease
	for rows.Next() {
		var l store.Lease
		if err := rows.Scan(&l.OrgID, &l.LicenceID, &l.ActivationID); err != nil {
			return nil, fmt.Errorf("expired leases: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("expired leases: %w", err)
	}
	return out, nil
}

package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/store"
)

// leasesSQL lists expired leases: $1 now, $2 the limit.
const leasesSQL = `WITH hp AS MATERIALIZED (
		SELECT id, org_id, heartbeat_interval_seconds FROM products WHERE heartbeat_interval_seconds IS NOT NULL)
	SELECT a.org_id, a.licence_id, a.id FROM hp
	JOIN licences l ON l.org_id = hp.org_id AND l.product_id = hp.id
	CROSS JOIN LATERAL (SELECT a.org_id, a.licence_id, a.id, a.last_seen_at FROM activations a
		WHERE a.licence_id = l.id AND a.deactivated_at IS NULL
			AND a.last_seen_at < $1::timestamptz - make_interval(secs => hp.heartbeat_interval_seconds * 2)
		ORDER BY a.last_seen_at, a.id LIMIT $2) a
	ORDER BY a.last_seen_at, a.id LIMIT $2`

// ExpiredLeases walks the products with an interval (products_heartbeat),
// their licences (licences_by_product_list) and the live activations of each
// seen before the cut (activations_live_seen): other products' activations
// are never read. The products are read first, and each licence's
// activations after it, whatever the planner makes of the tables' sizes.
func (r reader) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]store.Lease, error) {
	rows, err := r.q.Query(ctx, leasesSQL, ms(now), limit)
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

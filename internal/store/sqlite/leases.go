package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/store"
)

// ExpiredLeases walks the products with an interval (products_heartbeat),
// their licences (licences_by_product) and the live activations of each
// seen before the cut (activations_live_seen): other products' activations
// are never read.
func (r reader) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]store.Lease, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT a.org_id, a.licence_id, a.id FROM products p
		JOIN licences l ON l.product_id = p.id
		JOIN activations a ON a.licence_id = l.id AND a.deactivated_at IS NULL
			AND a.last_seen_at < ? - p.heartbeat_interval_seconds * 2000
		WHERE p.heartbeat_interval_seconds IS NOT NULL
		ORDER BY a.last_seen_at, a.id LIMIT ?`, store.Millis(now), limit)
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

package sqlite

import (
	"context"
	"fmt"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// ReplaceLicence writes the two licences as UpdateLicence and
// CreateLicence do, then moves the machines: SQLite's one writer holds
// every transaction apart, so the order of its counter changes matters
// to no other.
func (t *tx) ReplaceLicence(ctx context.Context, old, fresh *licentia.Licence) (int64, error) {
	if fresh.OrgID != old.OrgID {
		return 0, fmt.Errorf("replace licence: %w", store.NotFound(licentia.CodeLicenceNotFound, "Licence"))
	}
	if err := t.UpdateLicence(ctx, old); err != nil {
		return 0, err
	}
	if err := t.CreateLicence(ctx, fresh); err != nil {
		return 0, err
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE activations SET licence_id = ? WHERE org_id = ? AND licence_id = ? AND deactivated_at IS NULL`,
		fresh.ID, old.OrgID, old.ID)
	if err != nil {
		return 0, fmt.Errorf("replace licence: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := t.tx.ExecContext(ctx, `UPDATE provider_items SET licence_id = ? WHERE org_id = ? AND licence_id = ?`,
		fresh.ID, old.OrgID, old.ID); err != nil {
		return 0, fmt.Errorf("replace licence: %w", err)
	}
	if err := t.liveDeltaOf(ctx, old.OrgID, old.ID, -n); err != nil {
		return 0, err
	}
	return n, t.liveDeltaOf(ctx, fresh.OrgID, fresh.ID, n)
}

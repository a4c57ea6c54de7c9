package postgres

import (
	"context"
	"fmt"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// ReplaceLicence takes the locks in the design's order: the sweep lock and
// old's row, then its activations, then every counter row it changes,
// once, sorted (four rows at most: old's before and after, and fresh's),
// as one change of a licence does. fresh's row is new, seen by no other
// transaction until this one commits.
func (t *tx) ReplaceLicence(ctx context.Context, old, fresh *licentia.Licence) (int64, error) {
	if !isID(old.OrgID) || !isID(old.ID) || fresh.OrgID != old.OrgID {
		return 0, fmt.Errorf("replace licence: %w", licenceNotFound())
	}
	stored, err := t.LockLicence(ctx, old.OrgID, old.ID)
	if err != nil {
		return 0, fmt.Errorf("replace licence: %w", err)
	}
	if _, err := t.writeLicence(ctx, old, stored.Features); err != nil {
		return 0, err
	}
	inserted, err := t.insertLicence(ctx, fresh)
	if err != nil {
		return 0, err
	}
	t.note(inserted) // new, so held: no other transaction sees it yet
	tag, err := t.tx.Exec(ctx, `UPDATE activations SET licence_id = $1 WHERE org_id = $2 AND licence_id = $3 AND deactivated_at IS NULL`,
		fresh.ID, old.OrgID, old.ID)
	if err != nil {
		return 0, fmt.Errorf("replace licence: %w", err)
	}
	n := tag.RowsAffected()
	if _, err := t.tx.Exec(ctx, `UPDATE provider_items SET licence_id = $1 WHERE org_id = $2 AND licence_id = $3`,
		fresh.ID, old.OrgID, old.ID); err != nil {
		return 0, fmt.Errorf("replace licence: %w", err)
	}
	const move = `UPDATE licences SET live_activations = live_activations + $3 WHERE org_id = $1 AND id = $2 RETURNING ` + licenceColumns
	left, err := scanLicence(t.tx.QueryRow(ctx, move, old.OrgID, old.ID, -n))
	if err != nil {
		return 0, fmt.Errorf("replace licence: %w", err)
	}
	arrived, err := scanLicence(t.tx.QueryRow(ctx, move, fresh.OrgID, fresh.ID, n))
	if err != nil {
		return 0, fmt.Errorf("replace licence: %w", err)
	}
	t.note(left)
	t.note(arrived)
	w, err := t.watermark(ctx)
	if err != nil {
		return 0, err
	}
	d := deltas{}.add(stored.OrgID, store.KeyOf(stored, w), -1, -stored.LiveActivations)
	d.add(left.OrgID, store.KeyOf(left, w), 1, left.LiveActivations)
	return n, t.apply(ctx, d.add(arrived.OrgID, store.KeyOf(arrived, w), 1, arrived.LiveActivations))
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const activationColumns = `id, org_id, licence_id, machine_id, label, os, app_version, activated_at, last_seen_at, deactivated_at, components,
	rebound_at`

func scanActivation(row interface{ Scan(...any) error }) (*licentia.Activation, error) {
	var a licentia.Activation
	var activated, seen int64
	var deactivated, rebound *int64
	var components string
	err := row.Scan(&a.ID, &a.OrgID, &a.LicenceID, &a.MachineID, &a.Label, &a.OS, &a.AppVersion, &activated, &seen, &deactivated, &components,
		&rebound)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, store.NotFound(licentia.CodeNotFound, "Activation")
		}
		return nil, err
	}
	if a.Components, err = store.SplitComponents(components); err != nil {
		return nil, err
	}
	a.ActivatedAt, a.LastSeenAt, a.DeactivatedAt = store.FromMillis(activated), store.FromMillis(seen), store.FromMillisPtr(deactivated)
	a.ReboundAt = store.FromMillisPtr(rebound)
	return &a, nil
}

func (r reader) Activation(ctx context.Context, orgID, id string) (*licentia.Activation, error) {
	a, err := scanActivation(r.q.QueryRowContext(ctx, `SELECT `+activationColumns+` FROM activations WHERE org_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read activation: %w", err)
	}
	return a, nil
}

// licenceActivationsQuery lists a licence's activations. A licence's rows
// are read by its index: without statistics (the service never runs
// ANALYZE) SQLite's planner takes the organization's machine index for
// org_id = ? and reads every activation of the organization, three
// million in the large data set, to list a licence's few.
const licenceActivationsQuery = `SELECT ` + activationColumns + ` FROM activations INDEXED BY activations_by_licence
	WHERE org_id = ? AND licence_id = ? ORDER BY deactivated_at IS NOT NULL, activated_at, id`

// anonymiseActivationsQuery anonymises a licence's activations, found by
// its index as in licenceActivationsQuery.
const anonymiseActivationsQuery = `UPDATE activations INDEXED BY activations_by_licence
	SET machine_id = 'anonymised-' || id, label = 'anonymised', os = 'anonymised', app_version = 'anonymised',
	components = '{}', deactivated_at = coalesce(deactivated_at, ?)
	WHERE org_id = ? AND licence_id = ?`

func (r reader) Activations(ctx context.Context, orgID, licenceID string) ([]licentia.Activation, error) {
	rows, err := r.q.QueryContext(ctx, licenceActivationsQuery, orgID, licenceID)
	if err != nil {
		return nil, fmt.Errorf("list activations: %w", err)
	}
	defer rows.Close()
	var out []licentia.Activation
	for rows.Next() {
		a, err := scanActivation(rows)
		if err != nil {
			return nil, fmt.Errorf("list activations: %w", err)
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

// liveDelta changes the live activations of a licence, read in this
// transaction, and its counters.
func (t *tx) liveDelta(ctx context.Context, l *licentia.Licence, d int64) error {
	if _, err := t.tx.ExecContext(ctx, `UPDATE licences SET live_activations = ? WHERE id = ?`, l.LiveActivations+d, l.ID); err != nil {
		return fmt.Errorf("count live activations: %w", err)
	}
	w, err := t.watermark(ctx)
	if err != nil {
		return err
	}
	return t.bump(ctx, l.OrgID, store.KeyOf(l, w), 0, d)
}

// liveDeltaOf is liveDelta for a licence not read yet.
func (t *tx) liveDeltaOf(ctx context.Context, orgID, licenceID string, d int64) error {
	l, err := t.Licence(ctx, orgID, licenceID)
	if err != nil {
		return err
	}
	return t.liveDelta(ctx, l, d)
}

// CreateActivation reads the licence first, so a licence of another
// organization, or none, answers licence_not_found with nothing written.
func (t *tx) CreateActivation(ctx context.Context, a *licentia.Activation) error {
	l, err := t.Licence(ctx, a.OrgID, a.LicenceID)
	if err != nil {
		return fmt.Errorf("create activation: %w", err)
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO activations (`+activationColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.OrgID, a.LicenceID, a.MachineID, a.Label, a.OS, a.AppVersion,
		store.Millis(a.ActivatedAt), store.Millis(a.LastSeenAt), store.MillisPtr(a.DeactivatedAt), store.JoinComponents(a.Components),
		store.MillisPtr(a.ReboundAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "This machine already holds a live seat on the licence.")
	}
	if err != nil {
		return fmt.Errorf("create activation: %w", err)
	}
	if a.DeactivatedAt != nil {
		return nil
	}
	return t.liveDelta(ctx, l, 1)
}

func (t *tx) DeactivateActivation(ctx context.Context, orgID, id string, at time.Time) (*licentia.Activation, bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE activations SET deactivated_at = ? WHERE org_id = ? AND id = ? AND deactivated_at IS NULL`,
		store.Millis(at), orgID, id)
	if err != nil {
		return nil, false, fmt.Errorf("deactivate activation: %w", err)
	}
	n, _ := res.RowsAffected()
	a, err := t.Activation(ctx, orgID, id)
	if err != nil {
		return nil, false, err
	}
	if n == 0 {
		return a, false, nil
	}
	return a, true, t.liveDeltaOf(ctx, orgID, a.LicenceID, -1)
}

func (t *tx) AnonymiseActivations(ctx context.Context, orgID, licenceID string, at time.Time) error {
	var live int64
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM activations WHERE org_id = ? AND licence_id = ? AND deactivated_at IS NULL`,
		orgID, licenceID).Scan(&live)
	if err != nil {
		return fmt.Errorf("anonymise activations: %w", err)
	}
	_, err = t.tx.ExecContext(ctx, anonymiseActivationsQuery, store.Millis(at), orgID, licenceID)
	if err != nil {
		return fmt.Errorf("anonymise activations: %w", err)
	}
	return t.liveDeltaOf(ctx, orgID, licenceID, -live)
}

// LiveActivations reads by activations_live_seen.
func (r reader) LiveActivations(ctx context.Context, orgID, licenceID string) ([]licentia.Activation, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+activationColumns+` FROM activations
		WHERE org_id = ? AND licence_id = ? AND deactivated_at IS NULL ORDER BY last_seen_at, id`, orgID, licenceID)
	if err != nil {
		return nil, fmt.Errorf("list live activations: %w", err)
	}
	defer rows.Close()
	var out []licentia.Activation
	for rows.Next() {
		a, err := scanActivation(rows)
		if err != nil {
			return nil, fmt.Errorf("list live activations: %w", err)
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

func (r reader) TransfersSince(ctx context.Context, orgID, licenceID string, since time.Time) (int64, error) {
	var n int64
	err := r.q.QueryRowContext(ctx, `SELECT count(*) FROM activation_transfers WHERE org_id = ? AND licence_id = ? AND at >= ?`,
		orgID, licenceID, store.Millis(since)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count transfers: %w", err)
	}
	return n, nil
}

func (t *tx) RecordTransfer(ctx context.Context, tr *store.Transfer) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO activation_transfers (id, org_id, licence_id, activation_id, at) VALUES (?, ?, ?, ?, ?)`,
		tr.ID, tr.OrgID, tr.LicenceID, tr.ActivationID, store.Millis(tr.At))
	if err != nil {
		return fmt.Errorf("record transfer: %w", err)
	}
	return nil
}

func (r reader) LiveActivation(ctx context.Context, orgID, licenceID, machineID string) (*licentia.Activation, error) {
	a, err := scanActivation(r.q.QueryRowContext(ctx, `SELECT `+activationColumns+` FROM activations
		WHERE org_id = ? AND licence_id = ? AND machine_id = ? AND deactivated_at IS NULL`, orgID, licenceID, machineID))
	if err != nil {
		return nil, fmt.Errorf("read live activation: %w", err)
	}
	return a, nil
}

func (t *tx) TouchActivation(ctx context.Context, a *licentia.Activation) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE activations SET last_seen_at = ?, label = ?, os = ?, app_version = ?,
		machine_id = ?, components = ?, rebound_at = ? WHERE org_id = ? AND id = ? AND deactivated_at IS NULL`,
		store.Millis(a.LastSeenAt), a.Label, a.OS, a.AppVersion, a.MachineID, store.JoinComponents(a.Components), store.MillisPtr(a.ReboundAt),
		a.OrgID, a.ID)
	if err != nil {
		return fmt.Errorf("touch activation: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.NotFound(licentia.CodeNotFound, "Activation")
	}
	return nil
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const activationColumns = `id, org_id, licence_id, machine_id, label, os, app_version, activated_at, last_seen_at, deactivated_at, components,
	rebound_at`

func activationNotFound() error { return store.NotFound(licentia.CodeNotFound, "Activation") }

func scanActivation(row pgx.Row) (*licentia.Activation, error) {
	var a licentia.Activation
	var components string
	err := row.Scan(&a.ID, &a.OrgID, &a.LicenceID, &a.MachineID, &a.Label, &a.OS, &a.AppVersion,
		&a.ActivatedAt, &a.LastSeenAt, &a.DeactivatedAt, &components, &a.ReboundAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, activationNotFound()
	}
	if err != nil {
		return nil, err
	}
	if a.Components, err = store.SplitComponents(components); err != nil {
		return nil, err
	}
	a.ActivatedAt, a.LastSeenAt, a.DeactivatedAt, a.ReboundAt = a.ActivatedAt.UTC(), a.LastSeenAt.UTC(), utcPtr(a.DeactivatedAt), utcPtr(a.ReboundAt)
	return &a, nil
}

func (r reader) Activation(ctx context.Context, orgID, id string) (*licentia.Activation, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("read activation: %w", activationNotFound())
	}
	a, err := scanActivation(r.q.QueryRow(ctx, `SELECT `+activationColumns+` FROM activations WHERE org_id = $1 AND id = $2`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read activation: %w", err)
	}
	return a, nil
}

func (r reader) Activations(ctx context.Context, orgID, licenceID string) ([]licentia.Activation, error) {
	if !isID(orgID) || !isID(licenceID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+activationColumns+` FROM activations WHERE org_id = $1 AND licence_id = $2
		ORDER BY deactivated_at IS NOT NULL, activated_at, id`, orgID, licenceID)
	if err != nil {
		return nil, fmt.Errorf("list activations: %w", err)
	}
	out, err := collect(rows, scanActivation)
	if err != nil {
		return nil, fmt.Errorf("list activations: %w", err)
	}
	return out, nil
}

// liveDelta changes a licence's live activations and its counters. The
// caller holds the sweep lock and the licence's row lock.
func (t *tx) liveDelta(ctx context.Context, orgID, licenceID string, d int64) error {
	if d == 0 {
		return nil
	}
	l, err := scanLicence(t.tx.QueryRow(ctx, `UPDATE licences SET live_activations = live_activations + $3
		WHERE org_id = $1 AND id = $2 RETURNING `+licenceColumns, orgID, licenceID, d))
	if err != nil {
		return fmt.Errorf("count live activations: %w", err)
	}
	t.note(l)
	return t.countLive(ctx, l, d)
}

// countLive moves d live activations into the counters of l, as stored
// after its live_activations changed by d.
func (t *tx) countLive(ctx context.Context, l *licentia.Licence, d int64) error {
	w, err := t.watermark(ctx)
	if err != nil {
		return err
	}
	return t.apply(ctx, deltas{}.add(l.OrgID, store.KeyOf(l, w), 0, d))
}

const (
	insertActivation = `INSERT INTO activations (` + activationColumns + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`
	countNewSeat = `UPDATE licences SET live_activations = live_activations + 1 WHERE org_id = $1 AND id = $2`
)

// CreateActivation locks the licence first, so a licence of another
// organization answers licence_not_found with nothing written, and every
// activation change of a licence takes its locks in one order: the licence,
// then its activations.
//
// A live activation is held back, with the licence's count: the
// transaction holds the licence's row as it last read or wrote it, so
// nothing in the insert's answer is needed; the row after it is that row
// with one more live activation, and the counters move by that. A second
// live activation of the machine, which the licence's lock and the
// service's read of the machine's live seat already rule out, fails the
// insert on activations_live_machine when it is sent, and with it the
// transaction, as conflict. An activation created already deactivated
// takes no seat: ON CONFLICT DO NOTHING answers a taken id without
// aborting the transaction.
func (t *tx) CreateActivation(ctx context.Context, a *licentia.Activation) error {
	if err := t.holdLicence(ctx, a.OrgID, a.LicenceID); err != nil {
		return fmt.Errorf("create activation: %w", err)
	}
	args := []any{a.ID, a.OrgID, a.LicenceID, a.MachineID, a.Label, a.OS, a.AppVersion,
		ms(a.ActivatedAt), ms(a.LastSeenAt), msPtr(a.DeactivatedAt), store.JoinComponents(a.Components), msPtr(a.ReboundAt)}
	if a.DeactivatedAt != nil {
		tag, err := t.tx.Exec(ctx, insertActivation+` ON CONFLICT DO NOTHING`, args...)
		if err != nil {
			return fmt.Errorf("create activation: %w", err)
		}
		if tag.RowsAffected() != 1 {
			return activationTaken()
		}
		return nil
	}
	l := t.licences[[2]string{a.OrgID, a.LicenceID}] // held, so noted
	t.tx.laterOr(seatTaken, insertActivation, args...)
	t.tx.later(countNewSeat, a.OrgID, a.LicenceID)
	l.LiveActivations++
	t.note(&l)
	return t.countLive(ctx, &l, 1)
}

// seatTaken answers a held-back live activation that failed on the
// machine's live seat as conflict, and any other failure as it is.
func seatTaken(err error) error {
	if c, ok := uniqueViolated(err); ok && c == "activations_live_machine" {
		return activationTaken()
	}
	return fmt.Errorf("create activation: %w", err)
}

func activationTaken() error {
	return licentia.Errorf(licentia.CodeConflict, "This machine already holds a live seat on the licence.")
}

// DeactivateActivation reads the activation for its licence, locks the
// licence, then frees the activation if it is still live.
func (t *tx) DeactivateActivation(ctx context.Context, orgID, id string, at time.Time) (*licentia.Activation, bool, error) {
	a, err := t.Activation(ctx, orgID, id)
	if err != nil {
		return nil, false, err
	}
	if err := t.holdLicence(ctx, orgID, a.LicenceID); err != nil {
		return nil, false, fmt.Errorf("deactivate activation: %w", err)
	}
	freed, err := scanActivation(t.tx.QueryRow(ctx, `UPDATE activations SET deactivated_at = $1
		WHERE org_id = $2 AND id = $3 AND deactivated_at IS NULL RETURNING `+activationColumns, ms(at), orgID, id))
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		// Already freed, perhaps while this transaction waited for the
		// licence: answer it as it is now.
		a, err := t.Activation(ctx, orgID, id)
		return a, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("deactivate activation: %w", err)
	}
	return freed, true, t.liveDelta(ctx, orgID, freed.LicenceID, -1)
}

func (t *tx) AnonymiseActivations(ctx context.Context, orgID, licenceID string, at time.Time) error {
	if err := t.holdLicence(ctx, orgID, licenceID); err != nil {
		return fmt.Errorf("anonymise activations: %w", err)
	}
	var live int64
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM activations WHERE org_id = $1 AND licence_id = $2 AND deactivated_at IS NULL`,
		orgID, licenceID).Scan(&live)
	if err != nil {
		return fmt.Errorf("anonymise activations: %w", err)
	}
	_, err = t.tx.Exec(ctx, `UPDATE activations SET machine_id = 'anonymised-' || id::text, label = 'anonymised',
		os = 'anonymised', app_version = 'anonymised', components = '{}', deactivated_at = coalesce(deactivated_at, $1)
		WHERE org_id = $2 AND licence_id = $3`, ms(at), orgID, licenceID)
	if err != nil {
		return fmt.Errorf("anonymise activations: %w", err)
	}
	return t.liveDelta(ctx, orgID, licenceID, -live)
}

// LiveActivations reads by activations_live_seen.
func (r reader) LiveActivations(ctx context.Context, orgID, licenceID string) ([]licentia.Activation, error) {
	if !isID(orgID) || !isID(licenceID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+activationColumns+` FROM activations
		WHERE org_id = $1 AND licence_id = $2 AND deactivated_at IS NULL ORDER BY last_seen_at, id`, orgID, licenceID)
	if err != nil {
		return nil, fmt.Errorf("list live activations: %w", err)
	}
	out, err := collect(rows, scanActivation)
	if err != nil {
		return nil, fmt.Errorf("list live activations: %w", err)
	}
	return out, nil
}

func (r reader) TransfersSince(ctx context.Context, orgID, licenceID string, since time.Time) (int64, error) {
	if !isID(orgID) || !isID(licenceID) {
		return 0, nil
	}
	var n int64
	err := r.q.QueryRow(ctx, `SELECT count(*) FROM activation_transfers WHERE org_id = $1 AND licence_id = $2 AND at >= $3`,
		orgID, licenceID, ms(since)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count transfers: %w", err)
	}
	return n, nil
}

func (t *tx) RecordTransfer(ctx context.Context, tr *store.Transfer) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO activation_transfers (id, org_id, licence_id, activation_id, at) VALUES ($1, $2, $3, $4, $5)`,
		tr.ID, tr.OrgID, tr.LicenceID, tr.ActivationID, ms(tr.At))
	if err != nil {
		return fmt.Errorf("record transfer: %w", err)
	}
	return nil
}

func (r reader) LiveActivation(ctx context.Context, orgID, licenceID, machineID string) (*licentia.Activation, error) {
	if !isID(orgID) || !isID(licenceID) || !isText(machineID) {
		return nil, fmt.Errorf("read live activation: %w", activationNotFound())
	}
	a, err := scanActivation(r.q.QueryRow(ctx, liveActivation, orgID, licenceID, machineID))
	if err != nil {
		return nil, fmt.Errorf("read live activation: %w", err)
	}
	return a, nil
}

// liveActivation reads a machine's live activation on a licence.
const liveActivation = `SELECT ` + activationColumns + ` FROM activations
	WHERE org_id = $1 AND licence_id = $2 AND machine_id = $3 AND deactivated_at IS NULL`

func (t *tx) TouchActivation(ctx context.Context, a *licentia.Activation) error {
	if !isID(a.OrgID) || !isID(a.ID) {
		return activationNotFound()
	}
	tag, err := t.tx.Exec(ctx, `UPDATE activations SET last_seen_at = $1, label = $2, os = $3, app_version = $4,
		machine_id = $5, components = $6, rebound_at = $9 WHERE org_id = $7 AND id = $8 AND deactivated_at IS NULL`,
		ms(a.LastSeenAt), a.Label, a.OS, a.AppVersion, a.MachineID, store.JoinComponents(a.Components), a.OrgID, a.ID, msPtr(a.ReboundAt))
	if err != nil {
		return fmt.Errorf("touch activation: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return activationNotFound()
	}
	return nil
}

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

// leaseColumns are a lease's columns with its activation's machine id: f
// is the lease, a its activation.
const leaseColumns = `f.id, f.org_id, f.licence_id, f.activation_id, a.machine_id, f.taken_at, f.expires_at`

// inUse is the condition of a lease f, joined to its activation a, that
// holds a place at the time given as parameter n.
func inUse(n string) string { return `f.expires_at > $` + n + ` AND a.deactivated_at IS NULL` }

func leaseNotFound() error { return store.NotFound(licentia.CodeLeaseNotFound, "Lease") }

func scanLease(row pgx.Row) (*store.FloatingLease, error) {
	var l store.FloatingLease
	err := row.Scan(&l.ID, &l.OrgID, &l.LicenceID, &l.ActivationID, &l.MachineID, &l.TakenAt, &l.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, leaseNotFound()
	}
	if err != nil {
		return nil, err
	}
	l.TakenAt, l.ExpiresAt = l.TakenAt.UTC(), l.ExpiresAt.UTC()
	return &l, nil
}

func (r reader) LeasesInUse(ctx context.Context, orgID, licenceID string, now time.Time, limit int) ([]store.FloatingLease, error) {
	if !isID(orgID) || !isID(licenceID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+leaseColumns+` FROM floating_leases f JOIN activations a ON a.id = f.activation_id
		WHERE f.org_id = $1 AND f.licence_id = $2 AND `+inUse("3")+` ORDER BY f.expires_at, f.id LIMIT $4`,
		orgID, licenceID, ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	out, err := collect(rows, scanLease)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	return out, nil
}

func (r reader) LeaseUseOf(ctx context.Context, orgID, licenceID string, now time.Time) (store.LeaseUse, error) {
	var u store.LeaseUse
	if !isID(orgID) || !isID(licenceID) {
		return u, nil
	}
	err := r.q.QueryRow(ctx, `SELECT count(*), min(f.expires_at) FROM floating_leases f JOIN activations a ON a.id = f.activation_id
		WHERE f.org_id = $1 AND f.licence_id = $2 AND `+inUse("3"), orgID, licenceID, ms(now)).Scan(&u.InUse, &u.EarliestEnd)
	if err != nil {
		return u, fmt.Errorf("count leases: %w", err)
	}
	if u.EarliestEnd != nil {
		end := u.EarliestEnd.UTC()
		u.EarliestEnd = &end
	}
	return u, nil
}

func (r reader) LeaseOf(ctx context.Context, orgID, activationID string, now time.Time) (*store.FloatingLease, error) {
	if !isID(orgID) || !isID(activationID) {
		return nil, fmt.Errorf("read lease: %w", leaseNotFound())
	}
	l, err := scanLease(r.q.QueryRow(ctx, `SELECT `+leaseColumns+` FROM floating_leases f JOIN activations a ON a.id = f.activation_id
		WHERE f.org_id = $1 AND f.activation_id = $2 AND `+inUse("3"), orgID, activationID, ms(now)))
	if err != nil {
		return nil, fmt.Errorf("read lease: %w", err)
	}
	return l, nil
}

func (r reader) CountLeasesInUse(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := r.q.QueryRow(ctx, `SELECT count(*) FROM floating_leases f JOIN activations a ON a.id = f.activation_id
		WHERE `+inUse("1"), ms(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count leases: %w", err)
	}
	return n, nil
}

func (t *tx) PutLease(ctx context.Context, l *store.FloatingLease) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO floating_leases (id, org_id, licence_id, activation_id, taken_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (activation_id) DO UPDATE SET id = excluded.id, taken_at = excluded.taken_at,
		expires_at = excluded.expires_at`,
		l.ID, l.OrgID, l.LicenceID, l.ActivationID, ms(l.TakenAt), ms(l.ExpiresAt))
	if err != nil {
		return fmt.Errorf("put lease: %w", err)
	}
	return nil
}

// leaseOfMachine is the condition naming lease $1 of organization $2 and
// licence $3, held by the live activation of machine $4 on that licence.
const leaseOfMachine = `id = $1 AND org_id = $2 AND licence_id = $3 AND activation_id = (SELECT id FROM activations
	WHERE org_id = $2 AND licence_id = $3 AND machine_id = $4 AND deactivated_at IS NULL)`

// renewLeaseQuery reads licence $1 and, in the same statement, renews its
// lease $4 held by machine $3 when the licence is of product $2 and may
// hold leases at $6 (neither revoked nor expired). set_config makes this
// statement's transaction commit without waiting for the WAL flush (see
// Store.RenewLease); it is evaluated once, as a one-row FROM item.
var renewLeaseQuery = `WITH l AS (SELECT ` + licenceColumns + ` FROM licences WHERE id = $1),
	f AS (UPDATE floating_leases SET expires_at = greatest(expires_at, $5)
		FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async
		WHERE id = $4 AND licence_id = $1 AND expires_at > $6
		AND activation_id = (SELECT id FROM activations WHERE licence_id = $1 AND machine_id = $3 AND deactivated_at IS NULL)
		AND EXISTS (SELECT 1 FROM l WHERE product_id = $2 AND NOT ` + store.StateSQL(licentia.StateRevoked, "$6") +
	` AND NOT ` + store.StateSQL(licentia.StateExpired, "$6") + `)
		RETURNING id, org_id, activation_id, taken_at, expires_at)
	SELECT ` + store.Qualified(licenceColumns, "l") + `, f.id, f.org_id, f.activation_id, f.taken_at, f.expires_at FROM l LEFT JOIN f ON true`

func (db *DB) RenewLease(ctx context.Context, productID, licenceID, machineID, leaseID string, now, until time.Time) (*licentia.Licence, *store.FloatingLease, error) {
	if !isID(licenceID) {
		return nil, nil, fmt.Errorf("renew lease: %w", licenceNotFound())
	}
	if !isText(productID) || !isID(leaseID) || !isText(machineID) {
		l, err := db.LicenceByID(ctx, licenceID)
		return l, nil, err
	}
	var f struct {
		id, orgID, activationID *string
		taken, ends             *time.Time
	}
	l, err := scanLicence(store.ScanWith{Row: db.pool.QueryRow(ctx, renewLeaseQuery, licenceID, productID, machineID, leaseID, ms(until), ms(now)),
		Extra: []any{&f.id, &f.orgID, &f.activationID, &f.taken, &f.ends}})
	if err != nil {
		return nil, nil, fmt.Errorf("renew lease: %w", err)
	}
	if f.id == nil || f.orgID == nil || f.activationID == nil || f.taken == nil || f.ends == nil {
		return l, nil, nil
	}
	return l, &store.FloatingLease{ID: *f.id, OrgID: *f.orgID, LicenceID: licenceID, ActivationID: *f.activationID,
		MachineID: machineID, TakenAt: f.taken.UTC(), ExpiresAt: f.ends.UTC()}, nil
}

func (t *tx) ReleaseLease(ctx context.Context, orgID, licenceID, machineID, leaseID string, now time.Time) (bool, error) {
	if !isID(leaseID) || !isID(orgID) || !isID(licenceID) || !isText(machineID) {
		return false, nil
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM floating_leases WHERE `+leaseOfMachine+` AND expires_at > $5`,
		leaseID, orgID, licenceID, machineID, ms(now))
	if err != nil {
		return false, fmt.Errorf("release lease: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

func (t *tx) SweepLeases(ctx context.Context, now time.Time, limit int) (int64, error) {
	tag, err := t.tx.Exec(ctx, `DELETE FROM floating_leases WHERE id IN (SELECT f.id FROM floating_leases f
		JOIN activations a ON a.id = f.activation_id WHERE f.expires_at <= $1 OR a.deactivated_at IS NOT NULL
		LIMIT $2 FOR UPDATE OF f SKIP LOCKED)`, ms(now), limit)
	if err != nil {
		return 0, fmt.Errorf("sweep leases: %w", err)
	}
	return tag.RowsAffected(), nil
}

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

// leaseColumns are a lease's columns with its activation's machine id: f
// is the lease, a its activation.
const leaseColumns = `f.id, f.org_id, f.licence_id, f.activation_id, a.machine_id, f.taken_at, f.expires_at`

// inUse is the condition of a lease f, joined to its activation a, that
// holds a place at the time given as ?.
const inUse = `f.expires_at > ? AND a.deactivated_at IS NULL`

func leaseNotFound() error { return store.NotFound(licentia.CodeLeaseNotFound, "Lease") }

func scanLease(row interface{ Scan(...any) error }) (*store.FloatingLease, error) {
	var l store.FloatingLease
	var taken, ends int64
	if err := row.Scan(&l.ID, &l.OrgID, &l.LicenceID, &l.ActivationID, &l.MachineID, &taken, &ends); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, leaseNotFound()
		}
		return nil, err
	}
	l.TakenAt, l.ExpiresAt = store.FromMillis(taken), store.FromMillis(ends)
	return &l, nil
}

func (r reader) LeasesInUse(ctx context.Context, orgID, licenceID string, now time.Time, limit int) ([]store.FloatingLease, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+leaseColumns+` FROM floating_leases f JOIN activations a ON a.id = f.activation_id
		WHERE f.org_id = ? AND f.licence_id = ? AND `+inUse+` ORDER BY f.expires_at, f.id LIMIT ?`,
		orgID, licenceID, store.Millis(now), limit)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	defer rows.Close()
	var out []store.FloatingLease
	for rows.Next() {
		l, err := scanLease(rows)
		if err != nil {
			return nil, fmt.Errorf("list leases: %w", err)
		}
		out = append(out, *l)
	}
	return out, rows.Err()
}

func (r reader) LeaseUseOf(ctx context.Context, orgID, licenceID string, now time.Time) (store.LeaseUse, error) {
	var u store.LeaseUse
	var earliest *int64
	err := r.q.QueryRowContext(ctx, `SELECT count(*), min(f.expires_at) FROM floating_leases f JOIN activations a ON a.id = f.activation_id
		WHERE f.org_id = ? AND f.licence_id = ? AND `+inUse, orgID, licenceID, store.Millis(now)).Scan(&u.InUse, &earliest)
	if err != nil {
		return u, fmt.Errorf("count leases: %w", err)
	}
	u.EarliestEnd = store.FromMillisPtr(earliest)
	return u, nil
}

func (r reader) LeaseOf(ctx context.Context, orgID, activationID string, now time.Time) (*store.FloatingLease, error) {
	l, err := scanLease(r.q.QueryRowContext(ctx, `SELECT `+leaseColumns+` FROM floating_leases f JOIN activations a ON a.id = f.activation_id
		WHERE f.org_id = ? AND f.activation_id = ? AND `+inUse, orgID, activationID, store.Millis(now)))
	if err != nil {
		return nil, fmt.Errorf("read lease: %w", err)
	}
	return l, nil
}

func (r reader) CountLeasesInUse(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := r.q.QueryRowContext(ctx, `SELECT count(*) FROM floating_leases f JOIN activations a ON a.id = f.activation_id
		WHERE `+inUse, store.Millis(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count leases: %w", err)
	}
	return n, nil
}

func (t *tx) PutLease(ctx context.Context, l *store.FloatingLease) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO floating_leases (id, org_id, licence_id, activation_id, taken_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (activation_id) DO UPDATE SET id = excluded.id, taken_at = excluded.taken_at,
		expires_at = excluded.expires_at`,
		l.ID, l.OrgID, l.LicenceID, l.ActivationID, store.Millis(l.TakenAt), store.Millis(l.ExpiresAt))
	if err != nil {
		return fmt.Errorf("put lease: %w", err)
	}
	return nil
}

// leaseOfMachine is the condition naming lease ? of licence ?, held by the
// live activation of machine ? on that licence.
const leaseOfMachine = `id = ? AND org_id = ? AND licence_id = ? AND activation_id = (SELECT id FROM activations
	WHERE org_id = floating_leases.org_id AND licence_id = floating_leases.licence_id AND machine_id = ? AND deactivated_at IS NULL)`

func (db *DB) RenewLease(ctx context.Context, productID, licenceID, machineID, leaseID string, now, until time.Time) (*licentia.Licence, *store.FloatingLease, error) {
	var l *licentia.Licence
	var renewed *store.FloatingLease
	err := db.InTx(ctx, func(stx store.Tx) error {
		t := stx.(*tx)
		var err error
		l, renewed = nil, nil
		if l, err = t.LicenceByID(ctx, licenceID); err != nil {
			return err
		}
		if st := l.DerivedState(now); l.ProductID != productID || st == licentia.StateRevoked || st == licentia.StateExpired {
			return nil
		}
		var f store.FloatingLease
		var taken, ends int64
		err = t.tx.QueryRowContext(ctx, `UPDATE floating_leases SET expires_at = max(expires_at, ?)
			WHERE `+leaseOfMachine+` AND expires_at > ? RETURNING id, org_id, licence_id, activation_id, taken_at, expires_at`,
			store.Millis(until), leaseID, l.OrgID, licenceID, machineID, store.Millis(now)).
			Scan(&f.ID, &f.OrgID, &f.LicenceID, &f.ActivationID, &taken, &ends)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		f.MachineID, f.TakenAt, f.ExpiresAt = machineID, store.FromMillis(taken), store.FromMillis(ends)
		renewed = &f
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("renew lease: %w", err)
	}
	return l, renewed, nil
}

func (t *tx) ReleaseLease(ctx context.Context, orgID, licenceID, machineID, leaseID string, now time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM floating_leases WHERE `+leaseOfMachine+` AND expires_at > ?`,
		leaseID, orgID, licenceID, machineID, store.Millis(now))
	if err != nil {
		return false, fmt.Errorf("release lease: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

func (t *tx) SweepLeases(ctx context.Context, now time.Time, limit int) (int64, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM floating_leases WHERE id IN (SELECT f.id FROM floating_leases f
		JOIN activations a ON a.id = f.activation_id WHERE f.expires_at <= ? OR a.deactivated_at IS NOT NULL LIMIT ?)`,
		store.Millis(now), limit)
	if err != nil {
		return 0, fmt.Errorf("sweep leases: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

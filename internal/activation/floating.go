package activation

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// TakeLease is the body of POST /v1/leases: the licence key, the machine,
// and for a borrowed lease the hours it is to last.
type TakeLease struct {
	licentia.Decoded
	LicenceKey  *string `json:"licence_key" input:"required"`
	MachineID   *string `json:"machine_id" input:"required"`
	BorrowHours *int64  `json:"borrow_hours" input:"min=1,max=720"`
}

// Validate reports every problem of a lease request: the key and machine
// first, then borrow_hours.
func (in *TakeLease) Validate() licentia.Issues {
	fields := licentia.CheckFields(in)
	is := slices.Clone(in.Before)
	checkSeat(&is, fields, in.LicenceKey, in.MachineID)
	return append(is, fields.Of("/borrow_hours")...)
}

// LeaseRef is the body of a renewal or release: the licence key, the
// machine and the lease it holds.
type LeaseRef struct {
	licentia.Decoded
	LicenceKey *string `json:"licence_key" input:"required"`
	MachineID  *string `json:"machine_id" input:"required"`
	LeaseID    *string `json:"lease_id" input:"required"`
}

// Validate reports every problem of a renewal or release.
func (in *LeaseRef) Validate() licentia.Issues {
	fields := licentia.CheckFields(in)
	is := slices.Clone(in.Before)
	checkSeat(&is, fields, in.LicenceKey, in.MachineID)
	is = append(is, fields.Of("/lease_id")...)
	is.CheckString("/lease_id", in.LeaseID, func(id string) string {
		if _, ok := licentia.ParseUUID(id); !ok {
			return "must be a UUID"
		}
		return ""
	})
	return is
}

// LeaseResult is a lease taken or renewed: the lease, whether it is new
// (201) or the machine's lease renewed (200), and its verdict.
type LeaseResult struct {
	Lease   *store.FloatingLease
	Created bool
	Verdict string
}

// TakeLease gives the machine a place in its licence's concurrent use, or
// renews the lease it holds. The machine must hold a live activation. Of
// machines racing for the last place exactly one wins: the licence row is
// locked while its leases in use are counted.
func (s *Service) TakeLease(ctx context.Context, in TakeLease) (*LeaseResult, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	machineID := *in.MachineID
	k, err := s.verify(ctx, *in.LicenceKey, true)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var res LeaseResult
	var sub *subject
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		res = LeaseResult{} // a run again starts afresh (see store.Store.InTx)
		var locked *store.Locked
		var err error
		if locked, sub, err = k.lockSeat(ctx, tx, machineID, true); err != nil {
			return err
		}
		l, p, a := locked.Licence, locked.Product, locked.Held
		length, err := leaseLength(p, in.BorrowHours)
		if err != nil {
			return err
		}
		if err := refused(l, now); err != nil {
			return err
		}
		if a == nil {
			return licentia.Errorf(licentia.CodeActivationRequired, "The machine holds no live activation of this licence; activate it first.")
		}
		held, err := tx.LeaseOf(ctx, l.OrgID, a.ID, now)
		switch {
		case err == nil:
			// A machine holds one lease: asking again renews it, never
			// shortening a borrowed one.
			held.ExpiresAt = later(held.ExpiresAt, now.Add(length))
			res.Lease = held
			return tx.PutLease(ctx, held)
		case licentia.ErrorCode(err) != licentia.CodeLeaseNotFound:
			return err
		}
		if limit := l.ConcurrentAllowed(p); limit != nil {
			use, err := tx.LeaseUseOf(ctx, l.OrgID, l.ID, now)
			if err != nil {
				return err
			}
			if use.InUse >= *limit {
				return licentia.ConcurrencyLimitReached(*limit, use.InUse, use.EarliestEnd.Sub(now))
			}
		}
		res.Lease = &store.FloatingLease{ID: licentia.NewID(), OrgID: l.OrgID, LicenceID: l.ID, ActivationID: a.ID,
			MachineID: machineID, TakenAt: now, ExpiresAt: now.Add(length)}
		res.Created = true
		return tx.PutLease(ctx, res.Lease)
	})
	if err != nil {
		return nil, fmt.Errorf("take lease: %w", err)
	}
	return s.signLease(sub, &res)
}

// leaseLength is how long a lease of p lasts from now: the product's TTL,
// or borrow hours when asked for, which the product must allow.
func leaseLength(p *licentia.Product, borrowHours *int64) (time.Duration, error) {
	if borrowHours == nil {
		return p.LeaseTTL(), nil
	}
	if *borrowHours > p.MaxBorrowHours {
		var is licentia.Issues
		if p.MaxBorrowHours == 0 {
			is.Add("/borrow_hours", "borrowing is off for this product")
		} else {
			is.Add("/borrow_hours", "must be at most %d for this product", p.MaxBorrowHours)
		}
		return 0, is.Err()
	}
	return time.Duration(*borrowHours) * time.Hour, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// RenewLease moves the end of the machine's lease to a full TTL from now
// (never shortening a borrowed one) and signs a verdict for it. It takes
// no lock on the licence, since renewing a lease in use changes no count:
// the licence is read and the lease renewed in one statement
// (store.Store.RenewLease), the route's one round trip to the database,
// as a status check's read is.
func (s *Service) RenewLease(ctx context.Context, in LeaseRef) (*LeaseResult, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	k, err := s.verify(ctx, *in.LicenceKey, true)
	if err != nil {
		return nil, err
	}
	// Before the write: a renewal answered with an error moves nothing.
	if k.privErr != nil {
		return nil, k.privErr
	}
	now := s.now()
	p := k.product
	l, lease, err := s.store.RenewLease(ctx, p.ID, k.licenceID, *in.MachineID, *in.LeaseID, now, now.Add(p.LeaseTTL()))
	sub, err := k.subject(l, err)
	if err != nil {
		return nil, fmt.Errorf("renew lease: %w", err)
	}
	if err := refused(l, now); err != nil {
		return nil, err
	}
	if lease == nil {
		return nil, store.NotFound(licentia.CodeLeaseNotFound, "Lease")
	}
	return s.signLease(sub, &LeaseResult{Lease: lease})
}

// ReleaseLease ends the machine's lease and reports whether it was in use.
// It signs nothing, so it needs no signing key.
func (s *Service) ReleaseLease(ctx context.Context, in LeaseRef) (bool, error) {
	if err := in.Validate().Err(); err != nil {
		return false, err
	}
	sub, err := s.resolve(ctx, *in.LicenceKey, false)
	if err != nil {
		return false, err
	}
	now := s.now()
	released := false
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		released, err = tx.ReleaseLease(ctx, sub.licence.OrgID, sub.licence.ID, *in.MachineID, *in.LeaseID, now)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("release lease: %w", err)
	}
	return released, nil
}

// signLease signs res's verdict: the lease's machine and activation, valid
// until the lease's end.
func (s *Service) signLease(sub *subject, res *LeaseResult) (*LeaseResult, error) {
	sub.lease = res.Lease
	v, err := s.verdict(sub, res.Lease.MachineID, &res.Lease.ActivationID, s.now(), false)
	if err != nil {
		return nil, err
	}
	res.Verdict = v
	return res, nil
}

// leaseSweepBatch is how many leases one sweep transaction deletes.
const leaseSweepBatch = 500

// SweepLeases deletes the leases that hold no place any more (ended, or of
// a freed activation) and reports how many. They stopped counting when
// they ended; this only keeps the table small.
func (s *Service) SweepLeases(ctx context.Context) (int64, error) {
	var total int64
	for {
		var n int64
		err := s.store.InTx(ctx, func(tx store.Tx) error {
			var err error
			n, err = tx.SweepLeases(ctx, s.now(), leaseSweepBatch)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("sweep leases: %w", err)
		}
		total += n
		if n < leaseSweepBatch {
			return total, nil
		}
	}
}

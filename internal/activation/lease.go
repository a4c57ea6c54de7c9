package activation

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// LeaseLength is how long a live activation of p holds its seat without a
// status call: twice the heartbeat interval, so one missed heartbeat frees
// nothing. Zero when p has no heartbeat leases.
func LeaseLength(p *licentia.Product) time.Duration {
	if p.HeartbeatIntervalSeconds == nil {
		return 0
	}
	return 2 * time.Duration(*p.HeartbeatIntervalSeconds) * time.Second
}

// leaseBatch is how many expired leases one pass reads at a time.
const leaseBatch = 100

// FreeExpiredLeases frees the live activations whose heartbeat lease ran
// out, as a deactivation does (counts, audit entry, activation.deactivated
// event), with the system as actor, and reports how many it freed. Each is
// freed in its own transaction holding its licence, and checked again
// there: another process freeing the same activation, a status call
// renewing it, or its product's interval changing meanwhile leaves it be,
// so several sweepers at once free each activation once.
func (s *Service) FreeExpiredLeases(ctx context.Context) (int, error) {
	freed := 0
	for {
		now := s.now()
		leases, err := s.store.ExpiredLeases(ctx, now, leaseBatch)
		if err != nil {
			return freed, fmt.Errorf("free expired leases: %w", err)
		}
		n := 0
		for _, l := range leases {
			ok, err := s.freeLease(ctx, l, now)
			if err != nil {
				return freed, fmt.Errorf("free expired leases: %w", err)
			}
			if ok {
				n++
			}
		}
		freed += n
		// A batch that freed nothing was taken by another sweeper or
		// renewed: what remains is for the next pass.
		if len(leases) < leaseBatch || n == 0 {
			return freed, nil
		}
	}
}

// freeLease frees one activation whose lease ran out at now, unless it no
// longer has.
func (s *Service) freeLease(ctx context.Context, lease store.Lease, now time.Time) (bool, error) {
	freed := false
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		freed = false // a run again starts afresh (see store.Store.InTx)
		l, err := tx.LockLicence(ctx, lease.OrgID, lease.LicenceID)
		if err != nil {
			return err
		}
		a, err := tx.Activation(ctx, l.OrgID, lease.ActivationID)
		if err != nil {
			return err
		}
		if a.DeactivatedAt != nil {
			return nil
		}
		p, err := tx.Product(ctx, l.OrgID, l.ProductID)
		if err != nil {
			return err
		}
		if lease := LeaseLength(p); lease == 0 || now.Sub(a.LastSeenAt) <= lease {
			return nil
		}
		a, ok, err := tx.DeactivateActivation(ctx, l.OrgID, a.ID, now)
		if err != nil || !ok {
			return err
		}
		freed = true
		l.LiveActivations--
		return events.Record(ctx, tx, licentia.Actor{Type: licentia.ActorSystem}, l, a, licentia.AuditActivationDeactivated,
			licentia.EventActivationDeactivated, now, events.ActivationData(l, a))
	})
	return freed, err
}

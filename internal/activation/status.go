package activation

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// seenLag is how stale a live activation's stored last_seen_at may be: a
// busy machine does not cost a write on every status check.
const seenLag = 60 * time.Second

// RefreshAfter is how old a live activation's stored last_seen_at gets
// before a status check rewrites it: between half of seenLag and seenLag,
// fixed for each activation by its id. Machines activated together (a
// fleet rolled out at once) would otherwise all fall due in the same
// second, every minute, and queue their writes behind one another.
func RefreshAfter(activationID string) time.Duration {
	// FNV-1a, written out: hash/fnv would allocate on every status check.
	h := uint32(2166136261)
	for i := range len(activationID) {
		h = (h ^ uint32(activationID[i])) * 16777619
	}
	half := seenLag / 2
	return half + time.Duration(h%uint32(half/time.Millisecond))*time.Millisecond
}

// Status answers a signed verdict for every state of the licence, on this
// machine. It reads the stored status on every call, so a revocation takes
// effect at once. A live activation's last_seen_at is refreshed when it is
// older than RefreshAfter, never more than a minute. The answer carries the
// product's heartbeat interval too, outside the signed verdict.
func (s *Service) Status(ctx context.Context, in Status) (*StatusResult, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	machineID := *in.MachineID
	k, err := s.verify(ctx, *in.LicenceKey, true)
	if err != nil {
		return nil, err
	}
	l, seat, err := s.store.LicenceWithSeat(ctx, k.licenceID, machineID)
	sub, err := k.subject(l, err)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var activationID *string
	if seat != nil {
		activationID = &seat.ActivationID
		if isStale(seat.ActivationID, seat.LastSeenAt, now) {
			if err := s.touch(ctx, sub.licence, machineID, now); err != nil {
				return nil, fmt.Errorf("status: %w", err)
			}
		}
	}
	v, err := s.verdict(sub, machineID, activationID, now, true)
	if err != nil {
		return nil, err
	}
	return &StatusResult{Verdict: v, Heartbeat: k.product.HeartbeatIntervalSeconds}, nil
}

// StatusResult is a status check's answer: the verdict, and the product's
// heartbeat interval, nil when off.
type StatusResult struct {
	Verdict   string
	Heartbeat *int64
}

// isStale reports whether an activation's stored last_seen_at is due for
// a refresh.
func isStale(activationID string, lastSeen, now time.Time) bool {
	return now.Sub(lastSeen) > RefreshAfter(activationID)
}

// touch refreshes last_seen_at of the machine's live activation. It reads
// the activation again while holding the licence, as Activate does: the
// write carries label, os and app_version too, so a copy read before an
// activation refreshed them would write the old values back.
func (s *Service) touch(ctx context.Context, l *licentia.Licence, machineID string, now time.Time) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		locked, err := tx.LockSeat(ctx, l.OrgID, l.ID, machineID, false)
		if err != nil {
			return err
		}
		a := locked.Held
		if a == nil || !isStale(a.ID, a.LastSeenAt, now) {
			return nil // freed meanwhile, or refreshed: nothing to do
		}
		a.LastSeenAt = now
		return tx.TouchActivation(ctx, a)
	})
}

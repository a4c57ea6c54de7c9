package activation

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// boundBefore reads, before the licence is locked, which machine id each
// live activation of the licence holds, when m's components could rebind
// one: nil otherwise. A rebinding needs its activation to hold the same
// machine id under the lock, and not to have been rebound in the last
// rebindQuiet, so of requests racing to rebind one activation exactly one
// does (the first to hold the licence); the others find it bound to
// another machine, or just rebound, and go on as new machines.
func (s *Service) boundBefore(ctx context.Context, k *keyed, m Machine) (map[string]string, error) {
	if len(m.Components) == 0 || k.product.MachineMatch == "" || k.product.MachineMatch == licentia.MatchExact {
		return nil, nil
	}
	live, err := s.store.LiveActivations(ctx, k.product.OrgID, k.licenceID)
	if err != nil {
		return nil, err
	}
	bound := make(map[string]string, len(live))
	for _, a := range live {
		bound[a.ID] = a.MachineID
	}
	return bound, nil
}

// matching is the live activation m's components match best by rule, if
// any: the most equal components, then the least recently seen (live is in
// that order).
func matching(rule licentia.MachineMatch, live []licentia.Activation, m Machine) *licentia.Activation {
	var best *licentia.Activation
	bestEqual := 0
	for i := range live {
		if equal, ok := rule.Matches(live[i].Components, m.Components); ok && equal > bestEqual {
			best, bestEqual = &live[i], equal
		}
	}
	return best
}

// rebindQuiet is how long a rebound activation is left alone: requests
// racing to rebind it arrive within it of each other, and one whose whole
// run came after the first rebinding committed (its process was busy, its
// turn came late) would otherwise find it bound as it read it and rebind
// it a second time. A machine rebinds once when its parts change, not
// twice in seconds.
const rebindQuiet = 5 * time.Second

// rebind moves the live activation m's components match to m, in tx with
// l locked, and returns it; nil when none matches, or the match is bound
// to another machine id than bound says, or was rebound within
// rebindQuiet (another request rebound it meanwhile).
func rebind(ctx context.Context, tx store.Tx, l *licentia.Licence, p *licentia.Product, live []licentia.Activation,
	m Machine, bound map[string]string, now time.Time) (*licentia.Activation, error) {
	a := matching(p.MachineMatch, live, m)
	if a == nil || bound[a.ID] != a.MachineID || (a.ReboundAt != nil && !a.ReboundAt.Before(now.Add(-rebindQuiet))) {
		return nil, nil
	}
	previous := a.MachineID
	a.MachineID, a.Components, a.LastSeenAt, a.Label, a.OS, a.AppVersion, a.ReboundAt = m.ID, m.Components, now, m.Label, m.OS, m.AppVersion, &now
	if err := tx.TouchActivation(ctx, a); err != nil {
		return nil, err
	}
	return a, events.RecordActivation(ctx, tx, licentia.Actor{Type: licentia.ActorApplication}, l, a, licentia.AuditActivationRebound,
		licentia.EventActivationRebound, now, events.Note{PreviousMachineID: previous})
}

// transfer frees the place of the live activation seen least recently, in
// tx with l locked and full, when the licence may still transfer in the
// last 30 days and that activation was unseen for a day, and reports
// whether it did. The transfer is recorded, so it counts for 30 days.
func transfer(ctx context.Context, tx store.Tx, l *licentia.Licence, p *licentia.Product, live []licentia.Activation,
	allowed int64, now time.Time) (bool, error) {
	limit := l.TransfersAllowed(p)
	// Only a licence exactly full gains a place by freeing one: one whose
	// limit was lowered below its machines stays full.
	if limit == 0 || len(live) == 0 || l.LiveActivations != allowed || now.Sub(live[0].LastSeenAt) < licentia.TransferIdle {
		return false, nil
	}
	// The window is the 30 days up to now, now included: a transfer made
	// exactly 30 days ago has left it (times are whole milliseconds).
	made, err := tx.TransfersSince(ctx, l.OrgID, l.ID, now.Add(-licentia.TransferWindow+time.Millisecond))
	if err != nil || made >= limit {
		return false, err
	}
	a, ok, err := tx.DeactivateActivation(ctx, l.OrgID, live[0].ID, now)
	if err != nil || !ok {
		return false, err
	}
	l.LiveActivations--
	if err := tx.RecordTransfer(ctx, &store.Transfer{ID: licentia.NewID(), OrgID: l.OrgID, LicenceID: l.ID, ActivationID: a.ID, At: now}); err != nil {
		return false, err
	}
	return true, events.RecordActivation(ctx, tx, licentia.Actor{Type: licentia.ActorSystem}, l, a, licentia.AuditActivationDeactivated,
		licentia.EventActivationDeactivated, now, events.Note{Reason: events.ReasonTransfer})
}

// liveIfNeeded reads l's live activations, least recently seen first, when
// a rebinding (bound is set) or a transfer (l is full and may transfer)
// could use them: nil otherwise, so a plain activation reads nothing more.
func (s *Service) liveIfNeeded(ctx context.Context, tx store.Tx, l *licentia.Licence, p *licentia.Product, bound map[string]string) ([]licentia.Activation, error) {
	full := l.LiveActivations >= l.MachinesAllowed(p.MachinesPerSeat)
	if bound == nil && !(full && l.TransfersAllowed(p) > 0) {
		return nil, nil
	}
	return tx.LiveActivations(ctx, l.OrgID, l.ID)
}

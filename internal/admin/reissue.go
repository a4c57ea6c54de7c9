package admin

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Reissue is the body of a reissue: why the key is replaced, as a revoke's
// reason (1 to 500 characters, never the reserved prefix provider:).
type Reissue struct {
	licentia.Decoded
	Reason *string `json:"reason" input:"required"`
}

// Validate reports every problem of a reissue.
func (in *Reissue) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	is.CheckString("/reason", in.Reason, licentia.CheckReason)
	return is
}

// ReissuedReasonPrefix starts the reason of a licence revoked by a
// reissue, before the reason given.
const ReissuedReasonPrefix = "reissued: "

// Reissued is a reissue's outcome: the new licence with its key, and the
// old licence after the change.
type Reissued struct {
	LicenceView
	Old *licentia.Licence
}

// ReissueLicence replaces a licence's key, for a key that leaked, in one
// transaction: a new licence with a new id takes over everything of the
// old one (email, product, limits, expiry, trial, provider ids and order,
// external_ref, renewal URL, major, source) and its live machines, which
// keep their activation ids; its issued_at is now. The old licence becomes
// revoked with the reason "reissued: <reason>", and the two name each
// other (replaced_by, replaces). The plan sees no change: one licence
// leaves its count as the other arrives, so no plan check is made. Events,
// in order: licence.reissued (the old licence's snapshot after the change,
// and the replacement's), then licence.revoked of the old one; no
// licence.issued. Both licences' logs get an audit entry. Order of checks:
// 400, 404 licence_not_found (another organization's too), 409 conflict
// (derived revoked or expired, or anonymised), 503 product_unavailable.
// Any caller may reissue: the API, the console, the MCP server, and the
// customer portal with the customer actor.
func (s *Service) ReissueLicence(ctx context.Context, actor licentia.Actor, orgID, id string, in Reissue) (*Reissued, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	reason := ReissuedReasonPrefix + *in.Reason
	now := s.now()
	var out Reissued
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		out = Reissued{} // a run again starts afresh (see store.Store.InTx)
		before, err := tx.LockLicence(ctx, orgID, id)
		if err != nil {
			return err
		}
		if err := canReissue(before, now); err != nil {
			return err
		}
		p, err := tx.Product(ctx, orgID, before.ProductID)
		if err != nil {
			return err
		}
		fresh, old := replacement(before, now), *before
		key, err := s.deriveKey(p, fresh.ID)
		if err != nil {
			return err
		}
		old.Status, old.StatusReason, old.StatusChangedAt, old.UpdatedAt = licentia.StatusRevoked, &reason, &now, now
		old.ReplacedBy, old.SubscriptionEndedAt = &fresh.ID, nil
		moved, err := tx.ReplaceLicence(ctx, &old, fresh)
		if err != nil {
			return err
		}
		old.LiveActivations, fresh.LiveActivations = 0, moved
		out = Reissued{LicenceView: LicenceView{Licence: fresh, Key: &key}, Old: &old}
		return recordReissue(ctx, tx, actor, before, &old, fresh, *in.Reason, moved, now)
	})
	if err != nil {
		return nil, fmt.Errorf("reissue licence %s: %w", id, err)
	}
	return &out, nil
}

// canReissue refuses a licence whose key no longer works: derived revoked
// or expired (a reissued one is revoked), or anonymised. Reissuing is for
// a key in use that leaked.
func canReissue(l *licentia.Licence, now time.Time) error {
	if l.AnonymisedAt != nil {
		return licentia.Errorf(licentia.CodeConflict, "The licence was anonymised; its key cannot be reissued.")
	}
	if st := l.DerivedState(now); !st.IsInForce() {
		return licentia.Errorf(licentia.CodeConflict, "The licence is %s; only an active or trial licence's key can be reissued.", st)
	}
	return nil
}

// replacement is the licence that takes over from l at now: every field of
// l but its id, issue and record times, status reason and live machines
// (which TransferLicence moves), naming l as the one it replaces. A
// subscription's end, when l had one, moves with it, so the plan's count
// holds the one place l held.
func replacement(l *licentia.Licence, now time.Time) *licentia.Licence {
	fresh := *l
	fresh.ID, fresh.Replaces, fresh.ReplacedBy = licentia.NewID(), &l.ID, nil
	fresh.IssuedAt, fresh.CreatedAt, fresh.UpdatedAt = now, now, now
	fresh.StatusReason, fresh.StatusChangedAt, fresh.LiveActivations = nil, nil, 0
	return &fresh
}

// recordReissue writes the reissue's audit entries, on both licences, and
// its events: licence.reissued, then licence.revoked of the old licence.
func recordReissue(ctx context.Context, tx store.Tx, actor licentia.Actor, before, old, fresh *licentia.Licence,
	reason string, moved int64, now time.Time) error {
	data := map[string]any{"old_licence_id": old.ID, "new_licence_id": fresh.ID, "reason": reason, "machines_moved": moved}
	for _, l := range []*licentia.Licence{old, fresh} {
		data["licence_id"] = l.ID
		e := licentia.AuditEntry{OrgID: l.OrgID, LicenceID: &l.ID, Action: licentia.AuditLicenceReissued, Actor: actor, At: now}
		if err := events.Audit(ctx, tx, e, data); err != nil {
			return err
		}
	}
	if _, err := events.WriteReissued(ctx, tx, now, old, fresh); err != nil {
		return err
	}
	return events.Record(ctx, tx, actor, old, nil, licentia.AuditLicenceRevoked, licentia.EventLicenceRevoked, now,
		map[string]any{"licence_id": old.ID, "from": before.Status, "to": old.Status, "reason": *old.StatusReason})
}

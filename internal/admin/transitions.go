package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Change is the outcome of a status change: the licence after it, and
// whether its stored status changed.
type Change struct {
	Licence *licentia.Licence
	Changed bool
}

// transition is one of the status-changing routes.
type transition struct {
	to     licentia.Status
	action string
	event  licentia.EventType
}

var (
	revoke    = transition{licentia.StatusRevoked, licentia.AuditLicenceRevoked, licentia.EventLicenceRevoked}
	expire    = transition{licentia.StatusExpired, licentia.AuditLicenceExpired, licentia.EventLicenceExpired}
	reinstate = transition{licentia.StatusActive, licentia.AuditLicenceReinstated, licentia.EventLicenceReinstated}
)

// ChangeStatus is the body of a status change: revoke, expire, reinstate.
type ChangeStatus struct {
	licentia.Decoded
	Reason *string `json:"reason" input:"required"`
}

// Reason is a status change for reason, for callers with nothing to decode.
func Reason(reason string) ChangeStatus { return ChangeStatus{Reason: &reason} }

// Validate reports every problem of a status change.
func (in *ChangeStatus) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	is.CheckString("/reason", in.Reason, licentia.CheckReason)
	return is
}

// RevokeLicence revokes a licence (from active or expired). It takes effect
// at once on the status route, which reads the stored status.
func (s *Service) RevokeLicence(ctx context.Context, actor licentia.Actor, orgID, id string, in ChangeStatus) (*Change, error) {
	return s.changeStatus(ctx, actor, orgID, id, in, revoke)
}

// ExpireLicence expires a licence on purpose (from active or revoked).
func (s *Service) ExpireLicence(ctx context.Context, actor licentia.Actor, orgID, id string, in ChangeStatus) (*Change, error) {
	return s.changeStatus(ctx, actor, orgID, id, in, expire)
}

// ReinstateLicence makes a revoked or expired licence active again. The plan
// counts it like an issue when the result is derived active or trial.
func (s *Service) ReinstateLicence(ctx context.Context, actor licentia.Actor, orgID, id string, in ChangeStatus) (*Change, error) {
	return s.changeStatus(ctx, actor, orgID, id, in, reinstate)
}

// changeStatus applies a transition. changed compares stored statuses: a
// licence already in the target status changes nothing and writes no event.
// An anonymised licence answers 409 licence_anonymised.
func (s *Service) changeStatus(ctx context.Context, actor licentia.Actor, orgID, id string, in ChangeStatus, t transition) (*Change, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	reason := *in.Reason
	now := s.now()
	var out Change
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		out = Change{} // a run again starts afresh (see store.Store.InTx)
		var org lockedOrg
		if t.to == licentia.StatusActive {
			// Reinstating counts against the plan: take the organization's
			// lock first, always in the same order as issue.
			var err error
			if org, err = lockOrganization(ctx, tx, orgID); err != nil {
				return err
			}
		}
		before, err := tx.LockLicence(ctx, orgID, id)
		if err != nil {
			return err
		}
		out.Licence = before
		if before.AnonymisedAt != nil {
			return licentia.Errorf(licentia.CodeLicenceAnonymised, "The licence was anonymised; it can no longer change.")
		}
		if before.Status == t.to {
			return nil
		}
		after := *before
		after.Status, after.StatusReason, after.StatusChangedAt, after.UpdatedAt = t.to, &reason, &now, now
		if t.to == licentia.StatusActive && after.DerivedState(now).IsInForce() {
			if err := s.checkPlan(ctx, tx, org, resourceActiveLicences, now); err != nil {
				return err
			}
		}
		if err := tx.UpdateLicence(ctx, &after); err != nil {
			return err
		}
		out.Licence, out.Changed = &after, true
		return events.Record(ctx, tx, actor, &after, nil, t.action, t.event, now,
			map[string]any{"licence_id": id, "from": before.Status, "to": after.Status, "reason": reason})
	})
	if err != nil {
		return nil, fmt.Errorf("%s licence %s: %w", t.action, id, err)
	}
	return &out, nil
}

// Anonymise is the body of an erasure, which the caller confirms.
type Anonymise struct {
	licentia.Decoded
	Confirm *bool `json:"confirm" input:"required"`
}

// Validate reports every problem of an erasure: confirm must be true.
func (in *Anonymise) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	if in.Confirm != nil && !*in.Confirm {
		is.Add("/confirm", "must be true")
	}
	return is
}

// AnonymiseLicence erases a licence's customer data in one transaction: the
// email becomes <id>@anonymised.invalid; external_ref, the provider customer
// and checkout ids and the status reason are cleared; every machine is
// anonymised and freed (without activation.deactivated); audit entries are
// reduced to ids, times, statuses and counts; a stored-active licence (trial
// and lapsed included) becomes revoked. licence.anonymised is the only
// event, its snapshot taken after the erasure. Anonymising again changes
// nothing. The caller confirms the erasure: in.Confirm must be true.
func (s *Service) AnonymiseLicence(ctx context.Context, actor licentia.Actor, orgID, id string, in Anonymise) (*Change, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	now := s.now()
	var out Change
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		out = Change{} // a run again starts afresh (see store.Store.InTx)
		before, err := tx.LockLicence(ctx, orgID, id)
		if err != nil {
			return err
		}
		out.Licence = before
		if before.AnonymisedAt != nil {
			return nil
		}
		if err := tx.AnonymiseActivations(ctx, orgID, id, now); err != nil {
			return err
		}
		after := *before
		after.Email = id + "@" + licentia.AnonymisedDomain
		after.ExternalRef, after.StatusReason = nil, nil
		after.Provider.CustomerID, after.Provider.CheckoutID = nil, nil
		after.AnonymisedAt, after.UpdatedAt, after.LiveActivations = &now, now, 0
		if after.Status == licentia.StatusActive {
			after.Status, after.StatusChangedAt = licentia.StatusRevoked, &now
		}
		// AnonymiseActivations moved the live activations off the counters;
		// before now stands for the licence as counted since.
		counted := *before
		counted.LiveActivations = 0
		if err := tx.UpdateLicence(ctx, &after); err != nil {
			return err
		}
		if err := tx.RewriteLicenceAudit(ctx, orgID, id, reduceAudit); err != nil {
			return err
		}
		out.Licence, out.Changed = &after, true
		e := licentia.AuditEntry{OrgID: orgID, LicenceID: &after.ID, Action: licentia.AuditLicenceAnonymised, Actor: actor, At: now}
		if err := events.Audit(ctx, tx, e, map[string]any{"licence_id": id, "from": before.Status, "to": after.Status,
			"machines_freed": before.LiveActivations}); err != nil {
			return err
		}
		_, err = events.Write(ctx, tx, licentia.EventLicenceAnonymised, now, &after, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("anonymise licence %s: %w", id, err)
	}
	return &out, nil
}

// reduceAudit keeps of an audit entry's data only ids, times, statuses and
// counts, which say what happened without saying to whom.
func reduceAudit(data []byte) []byte {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return []byte("{}")
	}
	kept := map[string]any{}
	for k, v := range m {
		if keepInAudit(k) {
			kept[k] = v
		}
	}
	out, _ := json.Marshal(kept)
	return out
}

func keepInAudit(k string) bool {
	switch k {
	case "status", "from", "to", "changed", "limit_kind", "limit_count", "major", "machines_freed", "machines_moved", "keep_previous":
		return true
	}
	// A machine id can identify a person's computer: it goes with the rest.
	return k != "machine_id" && (strings.HasSuffix(k, "_id") || strings.HasSuffix(k, "_at"))
}

// ActivationChange is the outcome of freeing a machine.
type ActivationChange struct {
	Activation *licentia.Activation
	Changed    bool
}

// DeactivateActivation frees a machine's seat for the maker. Another
// organization's activation answers not_found like a missing one; one
// already freed changes nothing and writes no event.
func (s *Service) DeactivateActivation(ctx context.Context, actor licentia.Actor, orgID, id string) (*ActivationChange, error) {
	now := s.now()
	var out ActivationChange
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		a, err := tx.Activation(ctx, orgID, id)
		if err != nil {
			return err
		}
		l, err := tx.LockLicence(ctx, orgID, a.LicenceID)
		if err != nil {
			return err
		}
		a, changed, err := tx.DeactivateActivation(ctx, orgID, id, now)
		if err != nil {
			return err
		}
		out.Activation, out.Changed = a, changed
		if !changed {
			return nil
		}
		l.LiveActivations--
		return events.Record(ctx, tx, actor, l, a, licentia.AuditActivationDeactivated, licentia.EventActivationDeactivated, now, events.ActivationData(l, a))
	})
	if err != nil {
		return nil, fmt.Errorf("deactivate activation %s: %w", id, err)
	}
	return &out, nil
}

package admin

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// LicenceChange changes a licence in place; nil fields stay. expires_at
// sent as null (Decoded.IsNull) makes the licence perpetual.
type LicenceChange struct {
	licentia.Decoded
	LimitKind  *licentia.LimitKind `json:"limit_kind"`
	LimitCount *int64              `json:"limit_count" input:"min=1,max=4294967295"`
	ExpiresAt  *time.Time          `json:"expires_at" input:"nullable"`
	Major      *int64              `json:"major" input:"min=1,max=65535"`
	// Features replaces the licence's grants with these: codes, or
	// objects { code, expires_at }; [] takes them all away.
	Features []licentia.GrantRequest `json:"features"`
	// TransfersPer30Days sets the licence's own transfer limit; null
	// follows the product's again.
	TransfersPer30Days *int64 `json:"transfers_per_30_days" input:"nullable,min=0,max=100"`
	// MaxConcurrent sets the licence's own limit of machines in use at
	// once; null follows the product's again.
	MaxConcurrent *int64 `json:"max_concurrent" input:"nullable,min=1,max=100000"`
}

// pathConcurrent is where max_concurrent is recorded as null.
const pathConcurrent = "/max_concurrent"

// changesConcurrent reports whether the change gives max_concurrent, a
// number or null.
func (in *LicenceChange) changesConcurrent() bool {
	return in.MaxConcurrent != nil || in.IsNull(pathConcurrent)
}

// pathTransfers is where transfers_per_30_days is recorded as null.
const pathTransfers = "/transfers_per_30_days"

// changesTransfers reports whether the change gives transfers_per_30_days,
// a number or null.
func (in *LicenceChange) changesTransfers() bool {
	return in.TransfersPer30Days != nil || in.IsNull(pathTransfers)
}

// pathExpiresAt is where expires_at is reported and recorded as null.
const pathExpiresAt = "/expires_at"

// Perpetual is a change that removes a licence's expiry, for callers with
// nothing to decode.
func Perpetual() LicenceChange {
	var in LicenceChange
	in.SetNull(pathExpiresAt)
	return in
}

// clearsExpiry reports whether the change makes the licence perpetual.
func (in *LicenceChange) clearsExpiry() bool { return in.ExpiresAt == nil && in.IsNull(pathExpiresAt) }

// changesExpiry reports whether the change gives expires_at, a time or null.
func (in *LicenceChange) changesExpiry() bool { return in.ExpiresAt != nil || in.clearsExpiry() }

// Validate reports every problem of a change; at least one field is
// needed. A field sent but not read counts as given: it is already an
// issue of its own. An expires_at in the past is allowed: the licence is
// then derived expired.
func (in *LicenceChange) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	if in.LimitKind == nil && in.LimitCount == nil && !in.changesExpiry() && in.Major == nil && in.Features == nil && !in.changesTransfers() &&
		!in.changesConcurrent() && len(in.Unread) == 0 {
		is.Add("", "give at least one of limit_kind, limit_count, expires_at, major, features, transfers_per_30_days, max_concurrent")
	}
	var rules licentia.Issues
	if in.LimitKind != nil && *in.LimitKind != licentia.LimitSeats && *in.LimitKind != licentia.LimitMachines {
		rules.Add("/limit_kind", "must be seats or machines")
	}
	activation.CheckVerdictFits(&rules, "/features", licentia.CheckGrantRequests(&rules, "/features", in.Features, nil))
	is.Merge(rules)
	return is
}

// UpdateLicence changes a licence's limit, expiry, major or features in place, in
// the contract's order of checks: 400, 404 licence_not_found (unknown or
// another organization's), 409 licence_anonymised, 409 conflict (null
// expires_at on a trial), 402 plan_limit_reached. On a trial, expires_at
// moves the trial end with it: a trial ends with its key. A change that
// makes a licence count in the plan again (a lapsed licence given a later
// expiry, or made perpetual) is checked against the plan like a
// reinstatement. Lowering a limit evicts no machine: the live activations
// keep their seats, and new ones wait until there is room. A change that
// changes nothing writes nothing: no updated_at, no audit entry, no event.
func (s *Service) UpdateLicence(ctx context.Context, actor licentia.Actor, orgID, id string, in LicenceChange) (*Change, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	now := s.now()
	var out Change
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		out = Change{} // a run again starts afresh (see store.Store.InTx)
		var org lockedOrg
		if in.changesExpiry() {
			// Only the expiry can make a licence count in the plan again:
			// take the organization's lock first, in the same order as
			// issue and reinstate.
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
		if in.clearsExpiry() && before.TrialEndsAt != nil {
			return licentia.Errorf(licentia.CodeConflict, "A trial ends with its key: its expires_at cannot be null.")
		}
		after := *before
		changes := applyLicenceChange(&after, in)
		if in.Features != nil {
			grants, err := resolveGrants(ctx, tx, orgID, before.ProductID, "/features", in.Features)
			if err != nil {
				return err
			}
			if !licentia.EqualGrants(before.Features, grants) {
				after.Features, changes["features"] = grants, grantsAudit(before.Features, grants)
			}
		}
		if len(changes) == 0 {
			return nil
		}
		if !before.CountsInPlan(now) && after.CountsInPlan(now) {
			if err := s.checkPlan(ctx, tx, org, resourceActiveLicences, now); err != nil {
				return err
			}
		}
		after.UpdatedAt = now
		if err := tx.UpdateLicence(ctx, &after); err != nil {
			return err
		}
		out.Licence, out.Changed = &after, true
		changes["licence_id"] = id
		return events.Record(ctx, tx, actor, &after, nil, licentia.AuditLicenceUpdated, licentia.EventLicenceUpdated, now, changes)
	})
	if err != nil {
		return nil, fmt.Errorf("update licence %s: %w", id, err)
	}
	return &out, nil
}

// applyLicenceChange applies in to l and returns the fields it changed
// with their new values, for the audit entry.
func applyLicenceChange(l *licentia.Licence, in LicenceChange) map[string]any {
	changes := map[string]any{}
	if in.LimitKind != nil && *in.LimitKind != l.LimitKind {
		l.LimitKind, changes["limit_kind"] = *in.LimitKind, *in.LimitKind
	}
	if in.LimitCount != nil && *in.LimitCount != l.LimitCount {
		l.LimitCount, changes["limit_count"] = *in.LimitCount, *in.LimitCount
	}
	if in.Major != nil && *in.Major != l.Major {
		l.Major, changes["major"] = *in.Major, *in.Major
	}
	if in.changesTransfers() && !equalCounts(in.TransfersPer30Days, l.TransfersPer30Days) {
		l.TransfersPer30Days, changes["transfers_per_30_days"] = in.TransfersPer30Days, in.TransfersPer30Days
	}
	if in.changesConcurrent() && !equalCounts(in.MaxConcurrent, l.MaxConcurrent) {
		l.MaxConcurrent, changes["max_concurrent"] = in.MaxConcurrent, in.MaxConcurrent
	}
	if !in.changesExpiry() {
		return changes
	}
	var expires *time.Time
	if in.ExpiresAt != nil {
		t := licentia.TruncateMillis(*in.ExpiresAt)
		expires = &t
	}
	if equalTimes(expires, l.ExpiresAt) {
		return changes
	}
	l.ExpiresAt, changes["expires_at"] = expires, licentia.FormatTimePtr(expires)
	if l.TrialEndsAt != nil {
		// A trial ends with its key; UpdateLicence refused null before.
		l.TrialEndsAt, changes["trial_ends_at"] = expires, licentia.FormatTimePtr(expires)
	}
	return changes
}

// equalTimes reports whether two optional times are the same instant, or
// both absent.
func equalTimes(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// equalCounts reports whether two optional numbers are equal, or both
// absent.
func equalCounts(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

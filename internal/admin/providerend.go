package admin

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/store"
)

// ProviderEndKind says what ended a provider's licences.
type ProviderEndKind string

// What ends provider licences; each is also the last part of the reason.
const (
	// ProviderRefund is an order refunded in full: each licence gets its
	// mapping's on_refund.
	ProviderRefund ProviderEndKind = "refund"
	// ProviderSubscriptionEnded is a subscription's end: each licence gets
	// its mapping's on_subscription_end and keeps its place in the plan
	// for 30 days.
	ProviderSubscriptionEnded ProviderEndKind = "subscription_ended"
)

// ProviderEnd is a full refund of an order (OrderID, its order or
// checkout id) or the end of a subscription (SubscriptionID).
type ProviderEnd struct {
	OrgID          string
	IntegrationID  string
	Provider       providers.Name
	Kind           ProviderEndKind
	OrderID        *string
	SubscriptionID *string
	// EndedAt is when the subscription ended, as the provider says; now
	// when nil or later than now.
	EndedAt *time.Time
}

// Validate reports every problem of a provider end.
func (e *ProviderEnd) Validate() licentia.Issues {
	var is licentia.Issues
	checkProviderCaller(&is, e.OrgID, e.IntegrationID, e.Provider)
	checkProviderRef(&is, "/order_id", e.OrderID)
	checkProviderRef(&is, "/subscription_id", e.SubscriptionID)
	switch e.Kind {
	case ProviderRefund:
		if e.OrderID == nil {
			is.Add("/order_id", "is required for a refund")
		}
	case ProviderSubscriptionEnded:
		if e.SubscriptionID == nil {
			is.Add("/subscription_id", "is required for a subscription end")
		}
	default:
		is.Add("/kind", "must be refund or subscription_ended")
	}
	return is
}

// EndFromProvider applies a refund or a subscription end in one
// transaction; see EndFromProviderTx.
func (s *Service) EndFromProvider(ctx context.Context, e ProviderEnd) (*ProviderOutcome, error) {
	var out *ProviderOutcome
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		out, err = s.EndFromProviderTx(ctx, tx, e)
		return err
	})
	return out, err
}

// EndFromProviderTx applies a full refund or a subscription end to the
// licences of the order or subscription in tx, with reason
// provider:<provider>:refund or provider:<provider>:subscription_ended.
// Found no licence, it keeps the effect for when the order's licences are
// issued.
func (s *Service) EndFromProviderTx(ctx context.Context, tx store.Tx, e ProviderEnd) (*ProviderOutcome, error) {
	if err := e.Validate().Err(); err != nil {
		return nil, fmt.Errorf("end from provider: %w", err)
	}
	now := s.now()
	at := now
	if e.EndedAt != nil && e.EndedAt.Before(now) {
		at = licentia.TruncateMillis(*e.EndedAt)
	}
	if _, err := lockOrganization(ctx, tx, e.OrgID); err != nil {
		return nil, fmt.Errorf("end from provider: %w", err)
	}
	var its []store.ProviderItem
	var addons []store.ProviderAddon
	var err, addonErr error
	pending := store.PendingEffect{OrgID: e.OrgID, IntegrationID: e.IntegrationID, HappenedAt: at}
	if e.Kind == ProviderRefund {
		its, err = tx.ProviderItemsByOrder(ctx, e.OrgID, e.IntegrationID, *e.OrderID)
		addons, addonErr = tx.ProviderAddonsByOrder(ctx, e.OrgID, e.IntegrationID, *e.OrderID)
		pending.Kind, pending.Ref = store.PendingRefund, *e.OrderID
	} else {
		its, err = tx.ProviderItemsBySubscription(ctx, e.OrgID, e.IntegrationID, *e.SubscriptionID)
		addons, addonErr = tx.ProviderAddonsBySubscription(ctx, e.OrgID, e.IntegrationID, *e.SubscriptionID)
		pending.Kind, pending.Ref = store.PendingSubscriptionEnd, *e.SubscriptionID
	}
	if err = cmp.Or(err, addonErr); err != nil {
		return nil, fmt.Errorf("end from provider: %w", err)
	}
	if err := s.endAddons(ctx, tx, providerActor(e.IntegrationID), addons, at, now); err != nil {
		return nil, fmt.Errorf("end from provider: %w", err)
	}
	if len(its) == 0 && len(addons) > 0 {
		return &ProviderOutcome{}, nil
	}
	if len(its) == 0 {
		if err := tx.AddPendingEffect(ctx, &pending); err != nil {
			return nil, fmt.Errorf("end from provider: %w", err)
		}
		return &ProviderOutcome{Pending: true}, nil
	}
	changes, err := s.endLicences(ctx, tx, providerActor(e.IntegrationID), e.OrgID, its, e.Provider, e.Kind, at, now)
	if err != nil {
		return nil, fmt.Errorf("end from provider: %w", err)
	}
	return &ProviderOutcome{Changes: changes}, nil
}

// endLicences applies a refund or a subscription end, which happened at
// at, to the licences of its, in licence id order. A refund's revoke moves
// a licence from any status but revoked; a subscription end moves only an
// active one, so it never undoes a refund's revocation. A subscription end
// records when the subscription ended in any case, for the plan's count.
// Anonymised licences are left alone.
func (s *Service) endLicences(ctx context.Context, tx store.Tx, actor licentia.Actor, orgID string, its []store.ProviderItem,
	name providers.Name, kind ProviderEndKind, at, now time.Time) ([]Change, error) {
	reason := providerReason(name, string(kind))
	locked, err := lockProviderLicences(ctx, tx, orgID, its)
	if err != nil {
		return nil, err
	}
	var out []Change
	for i, it := range its {
		var t *transition
		switch {
		case kind == ProviderRefund && licentia.OnRefund(it.OnRefund) == licentia.RefundRevoke:
			t = &revoke
		case kind == ProviderSubscriptionEnded && licentia.OnSubscriptionEnd(it.OnSubscriptionEnd) == licentia.SubscriptionEndRevoke:
			t = &revoke
		case kind == ProviderSubscriptionEnded && licentia.OnSubscriptionEnd(it.OnSubscriptionEnd) == licentia.SubscriptionEndExpire:
			t = &expire
		}
		before := locked[i]
		if before.AnonymisedAt != nil {
			out = append(out, Change{Licence: before})
			continue
		}
		after := *before
		ended := kind == ProviderSubscriptionEnded && before.SubscriptionEndedAt == nil
		if ended {
			after.SubscriptionEndedAt = &at
		}
		moves := t != nil && before.Status != t.to &&
			(kind == ProviderRefund || before.Status == licentia.StatusActive)
		if moves {
			after.Status, after.StatusReason, after.StatusChangedAt = t.to, &reason, &now
		}
		if !moves && !ended {
			out = append(out, Change{Licence: before})
			continue
		}
		after.UpdatedAt = now
		if err := tx.UpdateLicence(ctx, &after); err != nil {
			return nil, err
		}
		out = append(out, Change{Licence: &after, Changed: moves})
		if !moves {
			continue
		}
		if err := events.Record(ctx, tx, actor, &after, nil, t.action, t.event, now,
			map[string]any{"licence_id": after.ID, "from": before.Status, "to": after.Status, "reason": reason}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

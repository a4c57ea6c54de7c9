package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/store"
)

// Limits of what a provider order carries.
const (
	MaxKeyValidDays  = 36500
	MaxProviderRef   = 255
	maxProviderItems = 100
)

// ProviderItem is one line of a paid order whose provider product is
// mapped, with what the mapping says.
type ProviderItem struct {
	ProviderProductID string
	ProductID         string
	LimitKind         licentia.LimitKind
	// LimitCount is the mapping's; each licence holds LimitCount ×
	// Quantity.
	LimitCount        int64
	Quantity          int64
	KeyValidDays      *int64
	RenewalURL        *string
	OnRefund          licentia.OnRefund
	OnSubscriptionEnd licentia.OnSubscriptionEnd
}

// ProviderOrder is a paid order (or a started trial) as a provider reports
// it. OrderID or CheckoutID names it; the order id, when given, is its key.
type ProviderOrder struct {
	OrgID         string
	IntegrationID string
	Provider      providers.Name
	// EventID is the provider's event, named in the issue's audit entry.
	EventID        string
	OrderID        *string
	CheckoutID     *string
	CustomerID     *string
	SubscriptionID *string
	Email          string
	// Subscription is true for a subscription's first order; its licences
	// run until the subscription ends.
	Subscription bool
	// TrialEndsAt is set when the subscription starts with a trial.
	TrialEndsAt *time.Time
	Items       []ProviderItem
}

// orderKey is what makes an order item's licence unique: the order id, or
// the checkout id when the provider gives no order id.
func (o *ProviderOrder) orderKey() string {
	if o.OrderID != nil {
		return *o.OrderID
	}
	return deref(o.CheckoutID, "")
}

// Validate reports every problem of a provider order.
func (o *ProviderOrder) Validate() licentia.Issues {
	var is licentia.Issues
	checkProviderCaller(&is, o.OrgID, o.IntegrationID, o.Provider)
	for _, r := range []struct {
		path string
		v    *string
	}{{"/order_id", o.OrderID}, {"/checkout_id", o.CheckoutID}, {"/customer_id", o.CustomerID}, {"/subscription_id", o.SubscriptionID}} {
		checkProviderRef(&is, r.path, r.v)
	}
	if o.OrderID == nil && o.CheckoutID == nil {
		is.Add("/order_id", "is required when there is no checkout id")
	}
	if o.Subscription && o.SubscriptionID == nil {
		is.Add("/subscription_id", "is required for a subscription")
	}
	if !o.Subscription && o.TrialEndsAt != nil {
		is.Add("/trial_ends_at", "is for subscriptions only")
	}
	is.CheckString("/email", &o.Email, licentia.CheckEmail)
	if len(o.Items) > maxProviderItems {
		is.Add("/items", "must be at most %d", maxProviderItems)
	}
	for i, it := range o.Items {
		p := fmt.Sprintf("/items/%d", i)
		checkProviderRef(&is, p+"/provider_product_id", &it.ProviderProductID)
		is.CheckString(p+"/product_id", &it.ProductID, licentia.CheckProductID)
		if it.LimitKind != licentia.LimitSeats && it.LimitKind != licentia.LimitMachines {
			is.Add(p+"/limit_kind", "must be seats or machines")
		}
		switch {
		case it.LimitCount < 1 || it.LimitCount > licentia.MaxLimitCount:
			is.Add(p+"/limit_count", "must be 1 to %d", int64(licentia.MaxLimitCount))
		case it.Quantity < 1 || it.Quantity > licentia.MaxLimitCount/it.LimitCount:
			is.Add(p+"/quantity", "must be at least 1, and limit_count × quantity at most %d", int64(licentia.MaxLimitCount))
		}
		if it.KeyValidDays != nil && (*it.KeyValidDays < 1 || *it.KeyValidDays > MaxKeyValidDays) {
			is.Add(p+"/key_valid_days", "must be 1 to %d", MaxKeyValidDays)
		}
		if u := it.RenewalURL; u != nil && (utf8.RuneCountInString(*u) > licentia.MaxRenewalURL || licentia.HasControl(*u)) {
			is.Add(p+"/renewal_url", "must be at most %d characters without control characters", licentia.MaxRenewalURL)
		}
		if it.OnRefund != licentia.RefundRevoke && it.OnRefund != licentia.RefundNone {
			is.Add(p+"/on_refund", "must be revoke or none")
		}
		if it.OnSubscriptionEnd != licentia.SubscriptionEndExpire && it.OnSubscriptionEnd != licentia.SubscriptionEndRevoke {
			is.Add(p+"/on_subscription_end", "must be expire or revoke")
		}
	}
	if len(is) > 0 {
		return is
	}
	// Items of one provider product make one licence.
	for _, it := range mergeItems(o.Items) {
		if it.Quantity > licentia.MaxLimitCount/it.LimitCount {
			is.Add("/items", "limit_count × quantity of %s must be at most %d", it.ProviderProductID, int64(licentia.MaxLimitCount))
		}
	}
	return is
}

// checkProviderCaller checks who a provider effect comes from.
func checkProviderCaller(is *licentia.Issues, orgID, integrationID string, name providers.Name) {
	if _, ok := licentia.ParseUUID(orgID); !ok {
		is.Add("/org_id", "must be a UUID")
	}
	if _, ok := licentia.ParseUUID(integrationID); !ok {
		is.Add("/integration_id", "must be a UUID")
	}
	if !slices.Contains(providers.Names, name) {
		is.Add("/provider", "must be one of %v", providers.Names)
	}
}

// checkProviderRef checks a provider's id: 1 to MaxProviderRef printable
// characters.
func checkProviderRef(is *licentia.Issues, path string, v *string) {
	if v == nil {
		return
	}
	if n := utf8.RuneCountInString(*v); n < 1 || n > MaxProviderRef || licentia.HasControl(*v) {
		is.Add(path, "must be 1 to %d printable characters", MaxProviderRef)
	}
}

// providerActor is the audit actor of a provider's changes: the
// integration that received them.
func providerActor(integrationID string) licentia.Actor {
	return licentia.Actor{Type: licentia.ActorProvider, ID: &integrationID}
}

// providerReason is the reason of a provider's status change, in the
// prefix administration callers may not use.
func providerReason(name providers.Name, what string) string {
	return licentia.ReservedReasonPrefix + string(name) + ":" + what
}

// IssueFromProvider issues the licences of a paid order in one transaction;
// see IssueFromProviderTx.
func (s *Service) IssueFromProvider(ctx context.Context, o ProviderOrder) ([]licentia.Licence, error) {
	var out []licentia.Licence
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		out, err = s.IssueFromProviderTx(ctx, tx, o)
		return err
	})
	return out, err
}

// IssueFromProviderTx issues one licence per order item in tx, which the
// caller commits with the provider's event id, and returns those issued.
// An item that issued its licence before issues nothing more. A full plan
// never refuses a paid order: the licence is issued and its audit entry
// says the plan was exceeded. Refunds, subscription ends and trial
// conversions that arrived before the order are applied to its licences
// in the same transaction.
func (s *Service) IssueFromProviderTx(ctx context.Context, tx store.Tx, o ProviderOrder) ([]licentia.Licence, error) {
	if err := o.Validate().Err(); err != nil {
		return nil, fmt.Errorf("issue from provider: %w", err)
	}
	now := s.now()
	actor := providerActor(o.IntegrationID)
	// The organization's lock comes first (docs/design.md, "Lock order"):
	// it serialises the plan count, and every provider effect of the
	// organization, so a refund and its order never pass each other.
	org, err := lockOrganization(ctx, tx, o.OrgID)
	if err != nil {
		return nil, fmt.Errorf("issue from provider: %w", err)
	}
	var issued []licentia.Licence
	for _, it := range mergeItems(o.Items) {
		l, err := s.issueItem(ctx, tx, org, actor, &o, it, now)
		if err != nil {
			return nil, fmt.Errorf("issue from provider: %w", err)
		}
		if l != nil {
			issued = append(issued, *l)
		}
	}
	// An order whose items all issued before took its pending effects
	// then; one that issued nothing keeps them for its licences.
	if len(issued) == 0 {
		return nil, nil
	}
	if err := s.applyPending(ctx, tx, actor, &o, now); err != nil {
		return nil, fmt.Errorf("issue from provider: %w", err)
	}
	// Pending effects may have changed what was issued: answer the
	// licences as committed.
	for i := range issued {
		l, err := tx.Licence(ctx, o.OrgID, issued[i].ID)
		if err != nil {
			return nil, fmt.Errorf("issue from provider: %w", err)
		}
		issued[i] = *l
	}
	return issued, nil
}

// mergeItems adds up the quantities of items of one provider product, so
// an order issues one licence per provider product.
func mergeItems(items []ProviderItem) []ProviderItem {
	var out []ProviderItem
	at := map[string]int{}
	for _, it := range items {
		if i, ok := at[it.ProviderProductID]; ok {
			out[i].Quantity += it.Quantity
			continue
		}
		at[it.ProviderProductID] = len(out)
		out = append(out, it)
	}
	return out
}

// issueItem issues the licence of one order item, or nothing (nil) when
// the item issued its licence before.
func (s *Service) issueItem(ctx context.Context, tx store.Tx, org lockedOrg, actor licentia.Actor, o *ProviderOrder,
	it ProviderItem, now time.Time) (*licentia.Licence, error) {
	done, err := tx.ProviderItemIssued(ctx, o.IntegrationID, o.orderKey(), it.ProviderProductID)
	if err != nil || done {
		return nil, err
	}
	p, err := tx.Product(ctx, o.OrgID, it.ProductID)
	if err != nil {
		return nil, err
	}
	l := &licentia.Licence{
		ID: licentia.NewID(), OrgID: o.OrgID, ProductID: p.ID, Email: o.Email, IssuedAt: now,
		LimitKind: it.LimitKind, LimitCount: it.LimitCount * it.Quantity, Major: p.CurrentMajor,
		Status: licentia.StatusActive, Source: licentia.SourceProvider, IntegrationID: &o.IntegrationID,
		Provider: licentia.ProviderRefs{OrderID: o.OrderID, SubscriptionID: o.SubscriptionID,
			CustomerID: o.CustomerID, CheckoutID: o.CheckoutID},
		RenewalURL: it.RenewalURL, CreatedAt: now, UpdatedAt: now,
	}
	switch {
	case o.Subscription && o.TrialEndsAt != nil:
		end := licentia.TruncateMillis(*o.TrialEndsAt)
		l.TrialEndsAt, l.ExpiresAt = &end, &end
	case !o.Subscription && it.KeyValidDays != nil:
		end := now.Add(time.Duration(*it.KeyValidDays) * 24 * time.Hour)
		l.ExpiresAt = &end
	}
	exceeded, err := s.planExceeded(ctx, tx, org, now)
	if err != nil {
		return nil, err
	}
	if err := tx.CreateLicence(ctx, l); err != nil {
		return nil, err
	}
	if err := tx.CreateProviderItem(ctx, &store.ProviderItem{LicenceID: l.ID, OrgID: l.OrgID, IntegrationID: o.IntegrationID,
		OrderKey: o.orderKey(), ProviderProductID: it.ProviderProductID, OnRefund: string(it.OnRefund),
		OnSubscriptionEnd: string(it.OnSubscriptionEnd)}); err != nil {
		return nil, err
	}
	data := map[string]any{
		"licence_id": l.ID, "product_id": l.ProductID, "status": l.Status, "limit_kind": l.LimitKind,
		"limit_count": l.LimitCount, "major": l.Major, "expires_at": licentia.FormatTimePtr(l.ExpiresAt),
		"trial_ends_at": licentia.FormatTimePtr(l.TrialEndsAt), "email": l.Email, "integration_id": o.IntegrationID,
		"provider_event_id": o.EventID,
	}
	if exceeded != nil {
		data["plan_exceeded"] = exceeded
	}
	return l, events.Record(ctx, tx, actor, l, nil, licentia.AuditLicenceIssued, licentia.EventLicenceIssued, now, data)
}

// planExceeded returns, when the organization's active licences already
// fill its plan, what an administration issue would be refused with (the
// plan, its limit and the count), for the audit entry; nil when there is
// room.
func (s *Service) planExceeded(ctx context.Context, tx store.Tx, org lockedOrg, now time.Time) (map[string]any, error) {
	err := s.checkPlan(ctx, tx, org, resourceActiveLicences, now)
	if licentia.ErrorCode(err) != licentia.CodePlanLimitReached {
		return nil, err
	}
	e, _ := errors.AsType[*licentia.Error](err)
	return e.Details, nil
}

// applyPending applies to a just-issued order the effects that arrived
// before it: a trial conversion first, then a refund, then the
// subscription's end.
func (s *Service) applyPending(ctx context.Context, tx store.Tx, actor licentia.Actor, o *ProviderOrder, now time.Time) error {
	take := func(kind store.PendingKind, ref *string) (*store.PendingEffect, error) {
		if ref == nil {
			return nil, nil
		}
		e, found, err := tx.TakePendingEffect(ctx, o.OrgID, o.IntegrationID, kind, *ref)
		if err != nil || !found {
			return nil, err
		}
		return &e, nil
	}
	if o.SubscriptionID != nil {
		e, err := take(store.PendingTrialConversion, o.SubscriptionID)
		if err != nil {
			return err
		}
		if e != nil {
			its, err := tx.ProviderItemsBySubscription(ctx, o.OrgID, o.IntegrationID, *o.SubscriptionID)
			if err != nil {
				return err
			}
			if _, err := s.convertTrials(ctx, tx, actor, o.OrgID, its, now); err != nil {
				return err
			}
		}
	}
	for _, ref := range []*string{o.OrderID, o.CheckoutID} {
		e, err := take(store.PendingRefund, ref)
		if err != nil {
			return err
		}
		if e == nil {
			continue
		}
		its, err := tx.ProviderItemsByOrder(ctx, o.OrgID, o.IntegrationID, *ref)
		if err != nil {
			return err
		}
		if _, err := s.endLicences(ctx, tx, actor, o.OrgID, its, o.Provider, ProviderRefund, e.HappenedAt, now); err != nil {
			return err
		}
	}
	if o.SubscriptionID != nil {
		e, err := take(store.PendingSubscriptionEnd, o.SubscriptionID)
		if err != nil || e == nil {
			return err
		}
		its, err := tx.ProviderItemsBySubscription(ctx, o.OrgID, o.IntegrationID, *o.SubscriptionID)
		if err != nil {
			return err
		}
		if _, err := s.endLicences(ctx, tx, actor, o.OrgID, its, o.Provider, ProviderSubscriptionEnded, e.HappenedAt, now); err != nil {
			return err
		}
	}
	return nil
}

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

// ProviderOutcome is what a provider's end or conversion did: the changes
// of the licences it found, or, when it found none, that it was kept until
// their order is issued.
type ProviderOutcome struct {
	Changes []Change
	Pending bool
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
	var err error
	pending := store.PendingEffect{OrgID: e.OrgID, IntegrationID: e.IntegrationID, HappenedAt: at}
	if e.Kind == ProviderRefund {
		its, err = tx.ProviderItemsByOrder(ctx, e.OrgID, e.IntegrationID, *e.OrderID)
		pending.Kind, pending.Ref = store.PendingRefund, *e.OrderID
	} else {
		its, err = tx.ProviderItemsBySubscription(ctx, e.OrgID, e.IntegrationID, *e.SubscriptionID)
		pending.Kind, pending.Ref = store.PendingSubscriptionEnd, *e.SubscriptionID
	}
	if err != nil {
		return nil, fmt.Errorf("end from provider: %w", err)
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

// ProviderConversion is a subscription leaving its trial for a paid
// period.
type ProviderConversion struct {
	OrgID          string
	IntegrationID  string
	Provider       providers.Name
	SubscriptionID string
}

// Validate reports every problem of a conversion.
func (c *ProviderConversion) Validate() licentia.Issues {
	var is licentia.Issues
	checkProviderCaller(&is, c.OrgID, c.IntegrationID, c.Provider)
	checkProviderRef(&is, "/subscription_id", &c.SubscriptionID)
	return is
}

// ConvertTrial converts a subscription's trial licences in one
// transaction; see ConvertTrialTx.
func (s *Service) ConvertTrial(ctx context.Context, c ProviderConversion) (*ProviderOutcome, error) {
	var out *ProviderOutcome
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		out, err = s.ConvertTrialTx(ctx, tx, c)
		return err
	})
	return out, err
}

// ConvertTrialTx converts the trial licences of a subscription in tx:
// trial_ends_at and expires_at cleared, event licence.trial_converted.
// Found no licence, it keeps the conversion for when the subscription's
// order is issued.
func (s *Service) ConvertTrialTx(ctx context.Context, tx store.Tx, c ProviderConversion) (*ProviderOutcome, error) {
	if err := c.Validate().Err(); err != nil {
		return nil, fmt.Errorf("convert trial: %w", err)
	}
	now := s.now()
	if _, err := lockOrganization(ctx, tx, c.OrgID); err != nil {
		return nil, fmt.Errorf("convert trial: %w", err)
	}
	its, err := tx.ProviderItemsBySubscription(ctx, c.OrgID, c.IntegrationID, c.SubscriptionID)
	if err != nil {
		return nil, fmt.Errorf("convert trial: %w", err)
	}
	if len(its) == 0 {
		err := tx.AddPendingEffect(ctx, &store.PendingEffect{OrgID: c.OrgID, IntegrationID: c.IntegrationID,
			Kind: store.PendingTrialConversion, Ref: c.SubscriptionID, HappenedAt: now})
		if err != nil {
			return nil, fmt.Errorf("convert trial: %w", err)
		}
		return &ProviderOutcome{Pending: true}, nil
	}
	changes, err := s.convertTrials(ctx, tx, providerActor(c.IntegrationID), c.OrgID, its, now)
	if err != nil {
		return nil, fmt.Errorf("convert trial: %w", err)
	}
	return &ProviderOutcome{Changes: changes}, nil
}

// convertTrials converts the stored-active trial licences of its, in
// licence id order; others change nothing. A paid trial converts even
// when its trial end has passed: payment makes it active again.
func (s *Service) convertTrials(ctx context.Context, tx store.Tx, actor licentia.Actor, orgID string, its []store.ProviderItem,
	now time.Time) ([]Change, error) {
	locked, err := lockProviderLicences(ctx, tx, orgID, its)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, before := range locked {
		if before.TrialEndsAt == nil || before.Status != licentia.StatusActive || before.AnonymisedAt != nil {
			out = append(out, Change{Licence: before})
			continue
		}
		after := *before
		after.TrialEndsAt, after.ExpiresAt, after.UpdatedAt = nil, nil, now
		if err := tx.UpdateLicence(ctx, &after); err != nil {
			return nil, err
		}
		out = append(out, Change{Licence: &after, Changed: true})
		if err := events.Record(ctx, tx, actor, &after, nil, licentia.AuditLicenceTrialConverted, licentia.EventLicenceTrialConverted, now,
			map[string]any{"licence_id": after.ID, "trial_ends_at": licentia.FormatTimePtr(before.TrialEndsAt)}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lockProviderLicences locks the licences of its, in the order given (by
// licence id), before any of them changes: licence rows come before
// counters and inserts (docs/design.md, "Lock order").
func lockProviderLicences(ctx context.Context, tx store.Tx, orgID string, its []store.ProviderItem) ([]*licentia.Licence, error) {
	out := make([]*licentia.Licence, len(its))
	for i, it := range its {
		l, err := tx.LockLicence(ctx, orgID, it.LicenceID)
		if err != nil {
			return nil, err
		}
		out[i] = l
	}
	return out, nil
}

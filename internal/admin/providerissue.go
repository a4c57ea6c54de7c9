package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

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
// in the same transaction. An add-on item with no licence to add to
// answers 400 validation_failed: the webhook holds such an order instead
// (see issueOrderTx).
func (s *Service) IssueFromProviderTx(ctx context.Context, tx store.Tx, o ProviderOrder) ([]licentia.Licence, error) {
	r, err := s.issueOrderTx(ctx, tx, o, nil)
	if err != nil {
		return nil, err
	}
	if len(r.unplaced) > 0 {
		return nil, fmt.Errorf("issue from provider: %w", noLicenceToAddTo(r.unplaced[0]))
	}
	return r.issued, nil
}

// orderResult is what a paid order did in its transaction.
type orderResult struct {
	// issued are the licences the order issued.
	issued []licentia.Licence
	// addedTo are the licences its add-on items added features to.
	addedTo []licentia.Licence
	// unplaced are its add-on items with no licence to add to: they wrote
	// nothing, and the order is held for them.
	unplaced []ProviderItem
}

// issueOrderTx is IssueFromProviderTx, noting the add-on items that found
// no licence to add to rather than failing on them, so the caller can
// hold the order in the same transaction. addsTo, when not nil, names the
// licence the add-on items add to (a held order's release).
func (s *Service) issueOrderTx(ctx context.Context, tx store.Tx, o ProviderOrder, addsTo *string) (*orderResult, error) {
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
	r := &orderResult{}
	var mailed []bool
	var addons []ProviderItem
	for _, it := range mergeItems(o.Items) {
		if it.AddsTo != nil {
			done, err := tx.ProviderAddonRecorded(ctx, o.IntegrationID, o.orderKey(), it.ProviderProductID)
			if err != nil {
				return nil, fmt.Errorf("issue from provider: %w", err)
			}
			if !done {
				addons = append(addons, it)
			}
			continue
		}
		l, err := s.issueItem(ctx, tx, org, actor, &o, it, now)
		if err != nil {
			return nil, fmt.Errorf("issue from provider: %w", err)
		}
		if l != nil {
			r.issued, mailed = append(r.issued, *l), append(mailed, it.SendKeyMail)
		}
	}
	// An order whose items all issued (or added) before took its pending
	// effects then; one that issued nothing keeps them for its licences.
	if len(r.issued) == 0 && len(addons) == 0 {
		return r, nil
	}
	ended, err := s.applyPending(ctx, tx, actor, &o, now)
	if err != nil {
		return nil, fmt.Errorf("issue from provider: %w", err)
	}
	for _, it := range addons {
		l, err := s.addItem(ctx, tx, actor, &o, it, ended, addsTo, now)
		switch {
		case errors.Is(err, errNoLicenceToAddTo):
			r.unplaced = append(r.unplaced, it)
		case err != nil:
			return nil, fmt.Errorf("issue from provider: %w", err)
		case l != nil && !slices.ContainsFunc(r.addedTo, func(a licentia.Licence) bool { return a.ID == l.ID }):
			r.addedTo = append(r.addedTo, *l)
		}
	}
	// Pending effects and add-ons may have changed what was issued: answer
	// the licences as committed.
	for _, ls := range [][]licentia.Licence{r.issued, r.addedTo} {
		for i := range ls {
			l, err := tx.Licence(ctx, o.OrgID, ls[i].ID)
			if err != nil {
				return nil, fmt.Errorf("issue from provider: %w", err)
			}
			ls[i] = *l
		}
	}
	if err := s.queueOrderMail(ctx, tx, actor, r.issued, mailed, now); err != nil {
		return nil, fmt.Errorf("issue from provider: %w", err)
	}
	return r, nil
}

// queueOrderMail queues one key mail for the buyer listing every licence
// the order just issued whose mapping sends key mail and which is in
// force (a refund that came first revoked its licence). The buyer's
// address passed the plain email rule; one mail cannot be sent to gets
// no mail, rather than one that fails.
func (s *Service) queueOrderMail(ctx context.Context, tx store.Tx, actor licentia.Actor, issued []licentia.Licence, mailed []bool,
	now time.Time) error {
	var ls []*licentia.Licence
	for i := range issued {
		if mailed[i] && issued[i].DerivedState(now).IsInForce() {
			ls = append(ls, &issued[i])
		}
	}
	if len(ls) == 0 {
		return nil
	}
	if licentia.CheckMailableEmail(ls[0].Email) != "" {
		s.log.WarnContext(ctx, "order's key mail not queued: the buyer's address is not one mail can be sent to",
			"org_id", ls[0].OrgID, "licence_id", ls[0].ID)
		return nil
	}
	_, err := queueKeyMail(ctx, tx, actor, ls, now)
	return err
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
			CustomerID: o.CustomerID, CheckoutID: o.CheckoutID, OrderNumber: o.OrderNumber},
		RenewalURL: it.RenewalURL, CreatedAt: now, UpdatedAt: now,
	}
	if l.Features, err = mappingGrants(ctx, tx, o.OrgID, p.ID, it.Features); err != nil {
		return nil, err
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
		"provider_event_id": o.EventID, "features": events.GrantsOf(l.Features),
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
// subscription's end. It returns when the first refund or subscription end
// taken happened, for the order's add-on items, which then add nothing;
// nil when none was.
func (s *Service) applyPending(ctx context.Context, tx store.Tx, actor licentia.Actor, o *ProviderOrder, now time.Time) (*time.Time, error) {
	var ended *time.Time
	endedAt := func(at time.Time) {
		if ended == nil || at.Before(*ended) {
			ended = &at
		}
	}
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
			return nil, err
		}
		if e != nil {
			its, err := tx.ProviderItemsBySubscription(ctx, o.OrgID, o.IntegrationID, *o.SubscriptionID)
			if err != nil {
				return nil, err
			}
			if _, err := s.convertTrials(ctx, tx, actor, o.OrgID, its, now); err != nil {
				return nil, err
			}
		}
	}
	for _, ref := range []*string{o.OrderID, o.CheckoutID} {
		e, err := take(store.PendingRefund, ref)
		if err != nil {
			return nil, err
		}
		if e == nil {
			continue
		}
		endedAt(e.HappenedAt)
		its, err := tx.ProviderItemsByOrder(ctx, o.OrgID, o.IntegrationID, *ref)
		if err != nil {
			return nil, err
		}
		if _, err := s.endLicences(ctx, tx, actor, o.OrgID, its, o.Provider, ProviderRefund, e.HappenedAt, now); err != nil {
			return nil, err
		}
	}
	if o.SubscriptionID != nil {
		e, err := take(store.PendingSubscriptionEnd, o.SubscriptionID)
		if err != nil || e == nil {
			return ended, err
		}
		endedAt(e.HappenedAt)
		its, err := tx.ProviderItemsBySubscription(ctx, o.OrgID, o.IntegrationID, *o.SubscriptionID)
		if err != nil {
			return nil, err
		}
		if _, err := s.endLicences(ctx, tx, actor, o.OrgID, its, o.Provider, ProviderSubscriptionEnded, e.HappenedAt, now); err != nil {
			return nil, err
		}
	}
	return ended, nil
}

// mappingGrants are a mapping's codes as the grants of a licence it
// issues, without an expiry; a code the catalogue lost since the mapping
// was saved is left out, so a paid order is never refused for it.
func mappingGrants(ctx context.Context, tx store.Tx, orgID, productID string, codes []string) ([]licentia.FeatureGrant, error) {
	if len(codes) == 0 {
		return nil, nil
	}
	catalogue, err := tx.ProductFeatures(ctx, orgID, productID)
	if err != nil {
		return nil, err
	}
	var out []licentia.FeatureGrant
	for _, code := range codes {
		if slices.ContainsFunc(catalogue, func(f licentia.Feature) bool { return f.Code == code }) {
			out = append(out, licentia.FeatureGrant{Code: code})
		}
	}
	licentia.SortGrants(out)
	return out, nil
}

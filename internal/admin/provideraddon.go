package admin

import (
	"context"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// noLicenceToAddTo decides what a paid add-on order answers when the buyer
// holds no licence in force of the product it adds to. Today that is what
// an order that cannot be issued as it stands answers: 400
// validation_failed, nothing written (not even the event's id), so the
// provider sends it again and a licence issued meanwhile takes the
// features. Held orders will keep it instead, with reason
// no_licence_to_add_to.
func noLicenceToAddTo(it ProviderItem) error {
	var is licentia.Issues
	is.Add("/items", "the buyer holds no licence of %s in force to add the features of %s to", it.ProductID, it.ProviderProductID)
	return is.Err()
}

// addonLicence finds, and locks, the licence an add-on order adds to: the
// buyer's newest licence in force of the product (same email, compared
// case-insensitively, same organization); nil when there is none.
func addonLicence(ctx context.Context, tx store.Tx, o *ProviderOrder, productID string, now time.Time) (*licentia.Licence, error) {
	ls, err := tx.FindLicences(ctx, o.OrgID, store.LicenceFilter{Email: &o.Email, ProductID: &productID, Limit: MaxFind}, now)
	if err != nil {
		return nil, err
	}
	for _, l := range ls {
		if l.AnonymisedAt == nil && l.DerivedState(now).IsInForce() {
			return tx.LockLicence(ctx, o.OrgID, l.ID)
		}
	}
	return nil, nil
}

// addItem applies one add-on order item in tx, once: it adds the item's
// features to the buyer's licence, recording which it added, or, when the
// order was refunded or its subscription ended before it arrived (ended),
// records that it added nothing.
func (s *Service) addItem(ctx context.Context, tx store.Tx, actor licentia.Actor, o *ProviderOrder, it ProviderItem,
	ended *time.Time, now time.Time) error {
	a := &store.ProviderAddon{OrgID: o.OrgID, IntegrationID: o.IntegrationID, OrderKey: o.orderKey(),
		ProviderProductID: it.ProviderProductID, OrderID: o.OrderID, CheckoutID: o.CheckoutID,
		SubscriptionID: o.SubscriptionID, Features: it.Features, EndedAt: ended}
	if ended != nil {
		return tx.CreateProviderAddon(ctx, a)
	}
	l, err := addonLicence(ctx, tx, o, it.ProductID, now)
	if err != nil {
		return err
	}
	if l == nil {
		return noLicenceToAddTo(it)
	}
	catalogue, err := tx.ProductFeatures(ctx, o.OrgID, l.ProductID)
	if err != nil {
		return err
	}
	after := *l
	after.Features = slices.Clone(l.Features)
	for _, code := range it.Features {
		// A code granted already, from any source, stays as it is granted;
		// one the catalogue lost since the mapping was saved is skipped.
		if licentia.HasGrant(l.Features, code) || !slices.ContainsFunc(catalogue, func(f licentia.Feature) bool { return f.Code == code }) {
			continue
		}
		a.Added = append(a.Added, code)
		after.Features = append(after.Features, licentia.FeatureGrant{Code: code})
	}
	licentia.SortGrants(after.Features)
	if len(a.Added) > 0 {
		var is licentia.Issues
		activation.CheckVerdictFits(&is, "/items", after.Features)
		if err := is.Err(); err != nil {
			return err
		}
	}
	a.LicenceID = &l.ID
	if err := tx.CreateProviderAddon(ctx, a); err != nil {
		return err
	}
	return s.changeGrants(ctx, tx, actor, l, &after, o.IntegrationID, "add", now)
}

// endAddons removes again what each add-on item of as added, once, when a
// full refund or the subscription's end arrives at at: exactly the codes
// the item added. A code another add-on item still holding features on the
// licence also grants stays, and passes to that item, whose own end then
// removes it.
func (s *Service) endAddons(ctx context.Context, tx store.Tx, actor licentia.Actor, as []store.ProviderAddon, at, now time.Time) error {
	for _, a := range as {
		if a.EndedAt != nil {
			continue
		}
		a.EndedAt = &at
		if a.LicenceID == nil || len(a.Added) == 0 {
			if err := tx.UpdateProviderAddon(ctx, &a); err != nil {
				return err
			}
			continue
		}
		l, err := tx.LockLicence(ctx, a.OrgID, *a.LicenceID)
		if err != nil {
			return err
		}
		live, err := tx.ProviderAddonsByLicence(ctx, a.OrgID, l.ID)
		if err != nil {
			return err
		}
		after := *l
		after.Features = nil
		var removed []string
		for _, code := range a.Added {
			i := slices.IndexFunc(live, func(b store.ProviderAddon) bool { return !sameAddon(a, b) && slices.Contains(b.Features, code) })
			if i < 0 {
				removed = append(removed, code)
				continue
			}
			live[i].Added = append(live[i].Added, code)
			if err := tx.UpdateProviderAddon(ctx, &live[i]); err != nil {
				return err
			}
		}
		for _, g := range l.Features {
			if !slices.Contains(removed, g.Code) {
				after.Features = append(after.Features, g)
			}
		}
		if err := tx.UpdateProviderAddon(ctx, &a); err != nil {
			return err
		}
		if l.AnonymisedAt != nil {
			continue
		}
		if err := s.changeGrants(ctx, tx, actor, l, &after, a.IntegrationID, "remove", now); err != nil {
			return err
		}
	}
	return nil
}

// sameAddon reports whether a and b are the same order item.
func sameAddon(a, b store.ProviderAddon) bool {
	return a.IntegrationID == b.IntegrationID && a.OrderKey == b.OrderKey && a.ProviderProductID == b.ProviderProductID
}

// changeGrants writes a licence whose grants an add-on changed, with
// licence.updated and an audit entry holding before and after; nothing
// when they are the same.
func (s *Service) changeGrants(ctx context.Context, tx store.Tx, actor licentia.Actor, before, after *licentia.Licence,
	integrationID, how string, now time.Time) error {
	if licentia.EqualGrants(before.Features, after.Features) {
		return nil
	}
	after.UpdatedAt = now
	if err := tx.UpdateLicence(ctx, after); err != nil {
		return err
	}
	changes := map[string]any{"licence_id": after.ID, "features": grantsAudit(before.Features, after.Features),
		"reason": "provider:add_on:" + how, "integration_id": integrationID}
	return events.Record(ctx, tx, actor, after, nil, licentia.AuditLicenceUpdated, licentia.EventLicenceUpdated, now, changes)
}

package admin

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// errNoLicenceToAddTo is an add-on item that found no licence to add its
// features to; it wrote nothing, and its order is held (reason
// no_licence_to_add_to) in the provider event's transaction.
var errNoLicenceToAddTo = errors.New("no licence to add to")

// noLicenceToAddTo is what an add-on order with no licence to add to
// answers where it cannot be held: 400 validation_failed, nothing written.
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

// namedAddonLicence finds, and locks, the licence id a held add-on order's
// release names: one of the organization's, of productID, in force. Any
// other answers 400 at /adds_to_licence_id, another organization's as if
// it did not exist.
func namedAddonLicence(ctx context.Context, tx store.Tx, orgID, id, productID string, now time.Time) (*licentia.Licence, error) {
	var is licentia.Issues
	l, err := tx.LockLicence(ctx, orgID, id)
	switch {
	case licentia.ErrorCode(err) == licentia.CodeLicenceNotFound:
		is.Add("/adds_to_licence_id", "names no licence of this organization")
	case err != nil:
		return nil, err
	case l.ProductID != productID:
		is.Add("/adds_to_licence_id", "must be a licence of %s, the product the add-on adds to", productID)
	case l.AnonymisedAt != nil || !l.DerivedState(now).IsInForce():
		is.Add("/adds_to_licence_id", "must be a licence in force")
	}
	if err := is.Err(); err != nil {
		return nil, err
	}
	return l, nil
}

// addItem applies one add-on order item in tx, once: it adds the item's
// features to the buyer's licence, or to the licence addsTo names when
// not nil, recording which it added, and returns that licence; or, when
// the order was refunded or its subscription ended before it arrived
// (ended), records that it added nothing and returns nil. With no licence
// to add to it writes nothing and answers errNoLicenceToAddTo.
func (s *Service) addItem(ctx context.Context, tx store.Tx, actor licentia.Actor, o *ProviderOrder, it ProviderItem,
	ended *time.Time, addsTo *string, now time.Time) (*licentia.Licence, error) {
	a := &store.ProviderAddon{OrgID: o.OrgID, IntegrationID: o.IntegrationID, OrderKey: o.orderKey(),
		ProviderProductID: it.ProviderProductID, OrderID: o.OrderID, CheckoutID: o.CheckoutID,
		SubscriptionID: o.SubscriptionID, Features: it.Features, EndedAt: ended}
	if ended != nil {
		return nil, tx.CreateProviderAddon(ctx, a)
	}
	var l *licentia.Licence
	var err error
	if addsTo != nil {
		l, err = namedAddonLicence(ctx, tx, o.OrgID, *addsTo, it.ProductID, now)
	} else {
		l, err = addonLicence(ctx, tx, o, it.ProductID, now)
	}
	if err != nil {
		return nil, err
	}
	if l == nil {
		return nil, errNoLicenceToAddTo
	}
	catalogue, err := tx.ProductFeatures(ctx, o.OrgID, l.ProductID)
	if err != nil {
		return nil, err
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
		// Too many features for a verdict is no fault a release corrects
		// (that is the licence's, not the order's): the order is refused.
		var is licentia.Issues
		activation.CheckVerdictFits(&is, "/items", after.Features)
		if err := is.Err(); err != nil {
			return nil, err
		}
	}
	a.LicenceID = &l.ID
	if err := tx.CreateProviderAddon(ctx, a); err != nil {
		return nil, err
	}
	return l, s.changeGrants(ctx, tx, actor, l, &after, o.IntegrationID, "add", now)
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

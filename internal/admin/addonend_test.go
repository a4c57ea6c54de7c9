package admin_test

import (
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/store"
)

// subscribe sends a paid subscription checkout of product for email, its
// subscription sub.
func (f *webhookFixture) subscribe(t *testing.T, eventID, sub, product, email string) error {
	t.Helper()
	session := "cs_" + sub
	f.shop.AddCheckout(session, providers.Item{ProductID: product, Quantity: 1})
	f.shop.AddSubscription(sub, providertest.StripeSubscription{Status: "active"})
	return f.send(t, providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: eventID, SessionID: session,
		Invoice: "in_" + sub, Subscription: sub, Customer: "cus_addon", Email: email}, f.clk.Now()))
}

// endSubscription sends the end of the subscription sub.
func (f *webhookFixture) endSubscription(t *testing.T, eventID, sub string) error {
	t.Helper()
	return f.send(t, providertest.StripeSubscriptionEvent(eventID, "customer.subscription.deleted", sub, "canceled", "", nil, f.clk.Now()))
}

// TestAddonSubscriptionEnd, on both engines: the end of an add-on's
// subscription removes the features it added, leaving the licence as it
// was; an end arriving before its add-on order makes the order add
// nothing; and an add-on subscription held for want of a licence, ended
// while held, adds nothing when released.
func TestAddonSubscriptionEnd(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := addonFixture(t, st)
		ctx := t.Context()
		f.mustSend(t, "order prod_app", f.order(t, "evt_1", "pi_1", "prod_app", "buyer@example.com"))
		id := f.licences(t)[0].ID

		f.mustSend(t, "add-on subscription", f.subscribe(t, "evt_2", "sub_pdf", "prod_pdf", "buyer@example.com"))
		if got := f.codes(t, id); got != "basic,export-pdf" {
			t.Fatalf("after the add-on subscription: %q, want basic,export-pdf", got)
		}
		f.mustSend(t, "its end", f.endSubscription(t, "evt_3", "sub_pdf"))
		if got := f.codes(t, id); got != "basic" {
			t.Errorf("after the add-on subscription's end: %q, want basic", got)
		}
		if l := f.licences(t)[0]; l.DerivedState(f.clk.Now()) != licentia.StateActive || l.SubscriptionEndedAt != nil {
			t.Errorf("the add-on's end touched the licence: state %s, subscription ended %v", l.DerivedState(f.clk.Now()), l.SubscriptionEndedAt)
		}

		f.mustSend(t, "end first", f.endSubscription(t, "evt_4", "sub_batch"))
		f.mustSend(t, "its add-on subscription", f.subscribe(t, "evt_5", "sub_batch", "prod_batch", "buyer@example.com"))
		if got := f.codes(t, id); got != "basic" {
			t.Errorf("add-on subscription ended before its order: %q, want basic", got)
		}

		f.mustSend(t, "held add-on subscription", f.subscribe(t, "evt_6", "sub_held", "prod_pdf", "later@example.com"))
		hs, err := f.svc.ListHeldOrders(ctx, f.org.ID)
		if err != nil || len(hs) != 1 || hs[0].Reason != licentia.HeldNoLicenceToAddTo {
			t.Fatalf("held orders = %+v, %v; want one no_licence_to_add_to", hs, err)
		}
		f.mustSend(t, "its end while held", f.endSubscription(t, "evt_7", "sub_held"))
		ls, err := f.svc.ReleaseHeldOrder(ctx, licentia.OperatorActor, f.org.ID, hs[0].ID, admin.HeldRelease{AddsToLicenceID: &id})
		if err != nil || len(ls) != 0 || f.codes(t, id) != "basic" {
			t.Errorf("release of an add-on ended while held = %+v, %v, grants %q; want nothing added", ls, err, f.codes(t, id))
		}
	})
}

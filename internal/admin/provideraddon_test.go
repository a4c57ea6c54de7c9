package admin_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/store"
)

// addonFixture is the webhook fixture with features basic, export-pdf and
// batch on app; prod_app issues licences granting basic, prod_pdf and
// prod_batch are add-ons of app granting export-pdf and batch.
func addonFixture(t *testing.T, st store.Store) *webhookFixture {
	t.Helper()
	f := newWebhookFixture(t, st)
	ctx := t.Context()
	for _, code := range []string{"basic", "export-pdf", "batch"} {
		if _, err := f.svc.SaveFeature(ctx, licentia.OperatorActor, f.org.ID, "app", code, admin.FeatureSave{Name: str(code)}); err != nil {
			t.Fatal(err)
		}
	}
	for id, code := range map[string]string{"prod_app": "basic", "prod_pdf": "export-pdf", "prod_batch": "batch"} {
		f.shop.AddProduct(id)
		in := admin.PutMapping{ProductID: str("app"), Features: []string{code}}
		if id != "prod_app" {
			in.AddsTo = str("app")
		}
		if _, err := f.svc.PutMapping(ctx, licentia.OperatorActor, f.org.ID, f.integ, id, in); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// order sends a paid checkout of one provider product, its payment intent
// pi, for email.
func (f *webhookFixture) order(t *testing.T, eventID, pi, product, email string) error {
	t.Helper()
	session := "cs_" + pi
	f.shop.AddCheckout(session, providers.Item{ProductID: product, Quantity: 1})
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: eventID, SessionID: session,
		PaymentIntent: pi, Customer: "cus_addon", Email: email}, f.clk.Now())
	return f.send(t, body)
}

// refund sends a full refund of the payment intent pi.
func (f *webhookFixture) refund(t *testing.T, eventID, pi string) error {
	t.Helper()
	return f.send(t, providertest.StripeChargeRefundedEvent(eventID, "ch_"+pi, pi, 4900, 4900, f.clk.Now()))
}

func (f *webhookFixture) send(t *testing.T, body []byte) error {
	t.Helper()
	_, err := f.svc.HandleProviderWebhook(t.Context(), admin.ProviderWebhook{IntegrationID: f.integ, Body: body,
		Header: http.Header{"Stripe-Signature": {providertest.StripeSignature(body, webhookSecret, f.clk.Now())}}})
	return err
}

// codes are the codes a licence grants, after reading it again.
func (f *webhookFixture) codes(t *testing.T, id string) string {
	t.Helper()
	l, err := f.st.Licence(t.Context(), f.org.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range l.Features {
		out = append(out, g.Code)
	}
	return strings.Join(out, ",")
}

func (f *webhookFixture) mustSend(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestMappingFeatures, on both engines: a mapping's features are checked
// against the product's catalogue and shown; a sale of it issues a
// licence granting them; an add-on's sale adds its features to the
// buyer's licence (email in another case) with licence.updated, issuing
// none, and its full refund removes them again.
func TestMappingFeatures(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := addonFixture(t, st)
		ctx := t.Context()
		_, err := f.svc.PutMapping(ctx, licentia.OperatorActor, f.org.ID, f.integ, "prod_app", admin.PutMapping{ProductID: str("app"),
			Features: []string{"basic", "sso"}})
		if !hasIssueAt(err, "/features/1") {
			t.Errorf("PutMapping(unknown feature) = %v, want an issue at /features/1", err)
		}
		_, err = f.svc.PutMapping(ctx, licentia.OperatorActor, f.org.ID, f.integ, "prod_pdf", admin.PutMapping{ProductID: str("app"),
			Features: []string{"export-pdf"}, AddsTo: str("other")})
		if !hasIssueAt(err, "/adds_to") {
			t.Errorf("PutMapping(adds_to another product) = %v, want an issue at /adds_to", err)
		}
		m, err := st.Mapping(ctx, f.org.ID, f.integ, "prod_pdf")
		if err != nil || !slices.Equal(m.Features, []string{"export-pdf"}) || m.AddsTo == nil || *m.AddsTo != "app" {
			t.Fatalf("Mapping(prod_pdf) = %+v, %v; want features [export-pdf], adds_to app", m, err)
		}

		f.mustSend(t, "order prod_app", f.order(t, "evt_1", "pi_1", "prod_app", "buyer@example.com"))
		ls := f.licences(t)
		if len(ls) != 1 {
			t.Fatalf("licences = %d, want 1", len(ls))
		}
		id := ls[0].ID
		if got := f.codes(t, id); got != "basic" {
			t.Fatalf("issued licence grants %q, want basic", got)
		}
		evs, _ := st.OrganizationEvents(ctx, f.org.ID)
		f.mustSend(t, "add-on order", f.order(t, "evt_2", "pi_2", "prod_pdf", "Buyer@Example.com"))
		if got := f.codes(t, id); got != "basic,export-pdf" {
			t.Errorf("after the add-on: %q, want basic,export-pdf", got)
		}
		if n := len(f.licences(t)); n != 1 {
			t.Errorf("licences after the add-on = %d, want 1", n)
		}
		after, _ := st.OrganizationEvents(ctx, f.org.ID)
		if len(after) != len(evs)+1 || after[len(after)-1].Type != licentia.EventLicenceUpdated {
			t.Errorf("events after the add-on: %d new, last %v; want one licence.updated", len(after)-len(evs), after[len(after)-1].Type)
		}
		f.mustSend(t, "add-on order again", f.order(t, "evt_2b", "pi_2", "prod_pdf", "buyer@example.com"))
		f.mustSend(t, "refund of the add-on", f.refund(t, "evt_3", "pi_2"))
		if got := f.codes(t, id); got != "basic" {
			t.Errorf("after the add-on's refund: %q, want basic", got)
		}
		if ls := f.licences(t); ls[0].DerivedState(f.clk.Now()) != licentia.StateActive {
			t.Errorf("the add-on's refund changed the licence's state to %s", ls[0].DerivedState(f.clk.Now()))
		}
	})
}

// hasIssueAt reports whether err is validation_failed with an issue at path.
func hasIssueAt(err error, path string) bool {
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok || e.Code != licentia.CodeValidationFailed {
		return false
	}
	issues, _ := e.Details["issues"].([]licentia.Issue)
	return slices.ContainsFunc(issues, func(is licentia.Issue) bool { return is.Path == path })
}

// TestAddonOrdering, on both engines: a refund recorded before its add-on
// order makes the order add nothing; a feature granted by another source
// (the licence itself, or another add-on) stays when an add-on that also
// grants it is refunded, and goes with the last; an add-on with no licence
// to add to is held, issuing nothing.
func TestAddonOrdering(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := addonFixture(t, st)
		ctx := t.Context()
		f.mustSend(t, "order prod_app", f.order(t, "evt_1", "pi_1", "prod_app", "buyer@example.com"))
		id := f.licences(t)[0].ID

		f.mustSend(t, "refund first", f.refund(t, "evt_r3", "pi_3"))
		f.mustSend(t, "its add-on order", f.order(t, "evt_3", "pi_3", "prod_pdf", "buyer@example.com"))
		if got := f.codes(t, id); got != "basic" {
			t.Errorf("add-on refunded before its order: %q, want basic", got)
		}
		f.mustSend(t, "its add-on order again", f.order(t, "evt_3b", "pi_3", "prod_pdf", "buyer@example.com"))
		if got := f.codes(t, id); got != "basic" {
			t.Errorf("add-on refunded before its order, sent again: %q, want basic", got)
		}

		f.mustSend(t, "add-on A", f.order(t, "evt_4", "pi_4", "prod_pdf", "buyer@example.com"))
		f.mustSend(t, "add-on B", f.order(t, "evt_5", "pi_5", "prod_pdf", "buyer@example.com"))
		f.mustSend(t, "refund of A", f.refund(t, "evt_r4", "pi_4"))
		if got := f.codes(t, id); got != "basic,export-pdf" {
			t.Errorf("after A's refund, B still granting: %q, want basic,export-pdf", got)
		}
		f.mustSend(t, "refund of B", f.refund(t, "evt_r5", "pi_5"))
		if got := f.codes(t, id); got != "basic" {
			t.Errorf("after both refunds: %q, want basic", got)
		}

		if _, err := f.svc.UpdateLicence(ctx, licentia.OperatorActor, f.org.ID, id, admin.LicenceChange{Features: []licentia.GrantRequest{
			{FeatureGrant: licentia.FeatureGrant{Code: "basic"}}, {FeatureGrant: licentia.FeatureGrant{Code: "batch"}}}}); err != nil {
			t.Fatal(err)
		}
		f.mustSend(t, "add-on of a feature granted already", f.order(t, "evt_6", "pi_6", "prod_batch", "buyer@example.com"))
		f.mustSend(t, "its refund", f.refund(t, "evt_r6", "pi_6"))
		if got := f.codes(t, id); got != "basic,batch" {
			t.Errorf("an add-on of a feature the licence granted, refunded: %q, want basic,batch", got)
		}

		f.mustSend(t, "add-on without a licence", f.order(t, "evt_7", "pi_7", "prod_pdf", "stranger@example.com"))
		if hs, _ := f.svc.ListHeldOrders(ctx, f.org.ID); len(hs) != 1 || hs[0].Reason != licentia.HeldNoLicenceToAddTo {
			t.Errorf("held orders after an add-on without a licence = %+v, want one, no_licence_to_add_to", hs)
		}
		if n := len(f.licences(t)); n != 1 {
			t.Errorf("licences after an add-on without a licence = %d, want 1", n)
		}
	})
}

// TestAddonRace, on both engines: two add-on orders for one licence, sent
// at once, both add their features.
func TestAddonRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := addonFixture(t, st)
		f.mustSend(t, "order prod_app", f.order(t, "evt_1", "pi_1", "prod_app", "buyer@example.com"))
		id := f.licences(t)[0].ID
		bodies := map[string][]byte{}
		for _, o := range []struct{ pi, product string }{{"pi_8", "prod_pdf"}, {"pi_9", "prod_batch"}} {
			session := "cs_" + o.pi
			f.shop.AddCheckout(session, providers.Item{ProductID: o.product, Quantity: 1})
			bodies[o.pi] = providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_" + o.pi, SessionID: session,
				PaymentIntent: o.pi, Customer: "cus_addon", Email: "buyer@example.com"}, f.clk.Now())
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(bodies))
		for _, body := range bodies {
			wg.Go(func() { errs <- f.send(t, body) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("racing add-on order: %v", err)
			}
		}
		if got := f.codes(t, id); got != "basic,batch,export-pdf" {
			t.Errorf("after two racing add-ons: %q, want basic,batch,export-pdf", got)
		}
	})
}

package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/store"
)

const heldSecret = "whsec_console_held_orders"

// shopWithMapping connects the env's Stripe shop to e.org, its prod_basic
// mapped to product desk-app, and returns the integration's id.
func shopWithMapping(t *testing.T, e *env) string {
	t.Helper()
	e.product(t, e.org.ID, "desk-app", "DESK")
	v, err := e.admin.ConnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID, admin.ConnectIntegration{Provider: "stripe",
		Name: "Shop", APIKey: shopKey, WebhookSecret: heldSecret})
	if err != nil {
		t.Fatal(err)
	}
	id, product := v.Integration.ID, "desk-app"
	if _, err := e.admin.PutMapping(t.Context(), licentia.OperatorActor, e.org.ID, id, "prod_basic", admin.PutMapping{ProductID: &product}); err != nil {
		t.Fatal(err)
	}
	return id
}

// holdOrder sends the shop's paid order n, bought by email, which must be
// held, and returns the held order's id.
func holdOrder(t *testing.T, e *env, integ string, n int, email string) string {
	t.Helper()
	session := fmt.Sprintf("cs_held_%d", n)
	e.shop.AddCheckout(session, providers.Item{ProductID: "prod_basic", Quantity: 1})
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: fmt.Sprintf("evt_held_%d", n), SessionID: session,
		PaymentIntent: fmt.Sprintf("pi_held_%d", n), Customer: "cus_held", Email: email}, e.clock.Now())
	res, err := e.admin.HandleProviderWebhook(t.Context(), admin.ProviderWebhook{IntegrationID: integ, Body: body,
		Header: http.Header{"Stripe-Signature": {providertest.StripeSignature(body, heldSecret, e.clock.Now())}}})
	if err != nil || !res.Held {
		t.Fatalf("HandleProviderWebhook() = %+v, %v; want the order held", res, err)
	}
	hs, err := e.admin.ListHeldOrders(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if *h.OrderID == fmt.Sprintf("pi_held_%d", n) {
			return h.ID
		}
	}
	t.Fatalf("order %d is not held", n)
	return ""
}

// TestHeldOrdersPage: the overview shows held orders, with a link, until
// they are released or dropped; the page lists each with why it was held;
// a release whose correction still fails shows the message next to its
// field and keeps the order; a corrected release issues the licence, a
// drop issues nothing; a viewer sees the orders but no form, and a forged
// post is refused; another organization's member cannot reach them.
func TestHeldOrdersPage(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		integ := shopWithMapping(t, e)
		first := holdOrder(t, e, integ, 1, "no address")
		second := holdOrder(t, e, integ, 2, "still no address")
		owner := e.owner(t)

		a := owner.get(t, "/console/")
		wantStatus(t, "overview", a, http.StatusOK)
		if !strings.Contains(a.body, "2 paid orders are held") || !strings.Contains(a.body, `href="/console/orders/held"`) {
			t.Errorf("overview does not show the 2 held orders with a link:\n%s", a.body)
		}
		a = owner.get(t, "/console/orders/held")
		wantStatus(t, "held orders", a, http.StatusOK)
		for _, want := range []string{"pi_held_1", "pi_held_2", "no address", "is not one a licence can be issued to",
			`action="/console/orders/held/` + first + `/release"`, `action="/console/orders/held/` + second + `/drop"`} {
			if !strings.Contains(a.body, want) {
				t.Errorf("held orders page lacks %q", want)
			}
		}

		viewer := e.as(t, licentia.RoleViewer)
		a = viewer.get(t, "/console/orders/held")
		wantStatus(t, "held orders as a viewer", a, http.StatusOK)
		if !strings.Contains(a.body, "pi_held_1") || strings.Contains(a.body, "/release\"") {
			t.Errorf("a viewer's held orders page: orders shown %t, release form shown %t",
				strings.Contains(a.body, "pi_held_1"), strings.Contains(a.body, "/release\""))
		}
		if a := viewer.post(t, "/console/orders/held/"+first+"/drop", url.Values{}); a.status != http.StatusForbidden {
			t.Errorf("forged drop as a viewer = %d, want 403", a.status)
		}

		a = owner.post(t, "/console/orders/held/"+first+"/release", url.Values{"email": {"a b@example.com"}})
		if !strings.Contains(a.body, "must not contain spaces or control characters") {
			t.Errorf("refused release does not say why:\n%s", a.body)
		}
		a = owner.post(t, "/console/orders/held/"+first+"/release", url.Values{"email": {"buyer@example.com"}, "limit_count": {"3"}})
		wantSeeOther(t, "release", a, "/console/orders/held?done=held-released")
		ls, err := e.store.FindLicences(t.Context(), e.org.ID, store.LicenceFilter{Limit: 10}, e.clock.Now())
		if err != nil || len(ls) != 1 || ls[0].Email != "buyer@example.com" || ls[0].LimitCount != 3 {
			t.Errorf("licences after the release = %+v, %v; want one of limit 3 for buyer@example.com", ls, err)
		}

		other := e.otherOrg(t)
		outsider := e.signUp(t, other.ID, "boss@beta.example")
		if a := outsider.post(t, "/console/orders/held/"+second+"/drop", url.Values{}); a.status != http.StatusNotFound {
			t.Errorf("another organization's drop = %d, want 404", a.status)
		}
		a = owner.post(t, "/console/orders/held/"+second+"/drop", url.Values{})
		wantSeeOther(t, "drop", a, "/console/orders/held?done=held-dropped")
		a = owner.get(t, "/console/orders/held")
		if !strings.Contains(a.body, "No held order") {
			t.Errorf("held orders page after release and drop lists orders:\n%s", a.body)
		}
		if a := owner.get(t, "/console/"); strings.Contains(a.body, "orders are held") || strings.Contains(a.body, "order is held") {
			t.Error("overview still shows held orders after they were released and dropped")
		}
		if a := owner.post(t, "/console/orders/held/"+second+"/drop", url.Values{}); a.status != http.StatusNotFound {
			t.Errorf("dropping a dropped order = %d, want 404", a.status)
		}
	})
}

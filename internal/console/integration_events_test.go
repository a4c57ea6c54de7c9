package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
)

// sendShopEvent delivers a signed Stripe event body to the integration.
func sendShopEvent(t *testing.T, e *env, integ string, body []byte) *admin.ProviderWebhookResult {
	t.Helper()
	res, err := e.admin.HandleProviderWebhook(t.Context(), admin.ProviderWebhook{IntegrationID: integ, Body: body,
		Header: http.Header{"Stripe-Signature": {providertest.StripeSignature(body, heldSecret, e.clock.Now())}}})
	if err != nil {
		t.Fatalf("HandleProviderWebhook() error = %v", err)
	}
	return res
}

// TestIntegrationProviderEvents: the integration page says the webhook
// secret is set (never showing it), lists the events to enable at Stripe,
// and the events received newest first with what each did and the order
// it named; an integration without a secret says so; another
// organization's member gets 404 for the page.
func TestIntegrationProviderEvents(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		integ := shopWithMapping(t, e)
		owner := e.owner(t)

		a := owner.get(t, "/console/integrations/"+integ)
		wantStatus(t, "integration page", a, http.StatusOK)
		for _, want := range []string{"Set. Events are accepted", "checkout.session.completed", "charge.refunded",
			"customer.subscription.updated", "No event received yet"} {
			if !strings.Contains(a.body, want) {
				t.Errorf("integration page before any event lacks %q", want)
			}
		}
		if strings.Contains(a.body, heldSecret) {
			t.Error("integration page shows the webhook secret")
		}

		e.shop.AddCheckout("cs_paid", providers.Item{ProductID: "prod_basic", Quantity: 1})
		sendShopEvent(t, e, integ, providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_paid",
			SessionID: "cs_paid", PaymentIntent: "pi_paid", Customer: "cus_1", Email: "buyer@example.com"}, e.clock.Now()))
		holdOrder(t, e, integ, 1, "no address")
		sendShopEvent(t, e, integ, providertest.StripeChargeRefundedEvent("evt_partial", "ch_1", "pi_paid", 1000, 10, e.clock.Now()))
		e.shop.AddCheckout("cs_unpaid", providers.Item{ProductID: "prod_basic", Quantity: 1})
		sendShopEvent(t, e, integ, providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_unpaid",
			SessionID: "cs_unpaid", PaymentIntent: "pi_unpaid", Customer: "cus_2", Email: "late@example.com",
			PaymentStatus: "unpaid"}, e.clock.Now()))

		a = owner.get(t, "/console/integrations/"+integ)
		wantStatus(t, "integration page", a, http.StatusOK)
		for _, want := range []string{"evt_paid", "issued licences", "pi_paid", "evt_held_1", "held for review", "pi_held_1",
			"evt_partial", "nothing to change", "evt_unpaid", "ignored"} {
			if !strings.Contains(a.body, want) {
				t.Errorf("integration page after four events lacks %q", want)
			}
		}
		if strings.Contains(a.body, "No event received yet") || strings.Contains(a.body, "buyer@example.com") {
			t.Error("integration page still says no event was received, or shows a buyer's email")
		}

		bare, err := e.admin.ConnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID, admin.ConnectIntegration{
			Provider: "stripe", Name: "Bare", APIKey: shopKey})
		if err != nil {
			t.Fatal(err)
		}
		if a := owner.get(t, "/console/integrations/"+bare.Integration.ID); !strings.Contains(a.body, "Not set.") {
			t.Errorf("integration without a secret does not say so:\n%s", a.body)
		}

		outsider := e.signUp(t, e.otherOrg(t).ID, "boss@beta.example")
		if a := outsider.get(t, "/console/integrations/"+integ); a.status != http.StatusNotFound {
			t.Errorf("another organization's integration page = %d, want 404", a.status)
		}
	})
}

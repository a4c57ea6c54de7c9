package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/store"
)

// TestProviderWebhookMetrics, on both engines: each provider webhook is
// counted once by its provider and outcome. A failed line-items call is
// failed (the provider sends it again), a paid checkout applied, its
// repeat repeated, an order that cannot be issued held, an event the
// service does nothing with ignored, and a
// bad signature, a body that is no event, a disconnected integration and
// an unknown one refused, the unknown one under provider "unknown".
func TestProviderWebhookMetrics(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newWebhookFixture(t, st)
		f.shop.AddCheckout("cs_admin_1", providers.Item{ProductID: "prod_app", Quantity: 1})
		ctx := t.Context()
		w := f.paid("evt_admin_metrics")

		f.shop.SetOutcome(providertest.ServerError)
		f.svc.HandleProviderWebhook(ctx, w)
		f.shop.SetOutcome(providertest.OK)
		for range 2 {
			if _, err := f.svc.HandleProviderWebhook(ctx, w); err != nil {
				t.Fatalf("HandleProviderWebhook() error = %v", err)
			}
		}
		if _, err := f.svc.HandleProviderWebhook(ctx, f.signed([]byte(
			`{"id":"evt_invoice","object":"event","type":"invoice.paid","data":{"object":{"id":"in_1"}}}`))); err != nil {
			t.Fatalf("HandleProviderWebhook(invoice.paid) error = %v", err)
		}
		bad := w
		bad.Header = http.Header{"Stripe-Signature": {providertest.StripeSignature(w.Body, "whsec_other", f.clk.Now())}}
		unknown := w
		unknown.IntegrationID = licentia.NewID()
		for _, r := range []admin.ProviderWebhook{bad, unknown, f.signed([]byte(`{"id":"evt_1"}`))} {
			if _, err := f.svc.HandleProviderWebhook(ctx, r); err == nil {
				t.Error("HandleProviderWebhook(refused) error = nil")
			}
		}
		// A paid order whose email fails the rule is held.
		f.shop.AddCheckout("cs_admin_held", providers.Item{ProductID: "prod_app", Quantity: 1})
		held := f.signed(providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_admin_held", SessionID: "cs_admin_held",
			PaymentIntent: "pi_admin_held", Customer: "cus_admin_1", Email: "no address"}, f.clk.Now()))
		if res, err := f.svc.HandleProviderWebhook(ctx, held); err != nil || !res.Held {
			t.Fatalf("HandleProviderWebhook(held) = %+v, %v", res, err)
		}
		// A disconnected integration's provider is still known.
		if err := f.svc.DisconnectIntegration(ctx, licentia.OperatorActor, f.org.ID, f.integ); err != nil {
			t.Fatalf("DisconnectIntegration() error = %v", err)
		}
		if _, err := f.svc.HandleProviderWebhook(ctx, f.paid("evt_admin_metrics_2")); err == nil {
			t.Error("HandleProviderWebhook(disconnected) error = nil")
		}
		want := `
# HELP licentia_provider_events_total Payment provider webhook events received, by provider and outcome: applied, held, repeated, ignored, refused or failed.
# TYPE licentia_provider_events_total counter
licentia_provider_events_total{outcome="applied",provider="stripe"} 1
licentia_provider_events_total{outcome="failed",provider="stripe"} 1
licentia_provider_events_total{outcome="held",provider="stripe"} 1
licentia_provider_events_total{outcome="ignored",provider="stripe"} 1
licentia_provider_events_total{outcome="refused",provider="stripe"} 3
licentia_provider_events_total{outcome="refused",provider="unknown"} 1
licentia_provider_events_total{outcome="repeated",provider="stripe"} 1
`
		if err := testutil.GatherAndCompare(f.metrics.Gatherer(), strings.NewReader(want), "licentia_provider_events_total"); err != nil {
			t.Error(err)
		}
	})
}

// signed is body sent to the fixture's integration, signed now with its
// webhook secret.
func (f *webhookFixture) signed(body []byte) admin.ProviderWebhook {
	return admin.ProviderWebhook{IntegrationID: f.integ, Body: body,
		Header: http.Header{"Stripe-Signature": {providertest.StripeSignature(body, webhookSecret, f.clk.Now())}}}
}

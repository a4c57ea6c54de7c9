package httpapi_test

import (
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
)

// credentialForms lists the ways a credential could be written out: as
// given, base64 in each alphabet, hex, and without its provider prefix
// (sk_test_, whsec_...), so a masked prefix in front of the rest is caught
// too.
func credentialForms(s string) []string {
	forms := []string{s,
		base64.StdEncoding.EncodeToString([]byte(s)), base64.RawStdEncoding.EncodeToString([]byte(s)),
		base64.URLEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s)),
		hex.EncodeToString([]byte(s)), strings.ToUpper(hex.EncodeToString([]byte(s))),
	}
	if i := strings.LastIndex(s, "_"); i >= 0 && len(s)-i > 12 {
		forms = append(forms, s[i+1:])
	}
	return forms
}

// TestCredentialsNeverShown connects a Stripe, a Paddle and a Lemon Squeezy
// integration, then calls every integration and mapping route, succeeding
// and failing (the provider refusing the key, failing, the integration
// unknown), and the provider webhook route with good and bad signatures
// and a provider that fails: no answer body or header and no log line holds
// an API key or a webhook secret, in any of credentialForms.
func TestCredentialsNeverShown(t *testing.T) {
	const (
		stripeKey     = "sk_test_51LeakCheckStripeKeyOnly0000"
		stripeSecret  = "whsec_LeakCheckStripeWebhookSecret00"
		paddleKey     = "pdl_sdbx_apikey_01leakcheck00000000000000_LeakCheckPaddleKey00_AQO"
		paddleSecret  = "pdl_ntfset_01leakcheck_LeakCheckPaddleWebhookSecret0"
		lemonKey      = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.LeakCheckLemonKey0000"
		lemonSecret   = "LeakCheckLemonSqueezySigningSecret00"
		stripeProduct = "prod_leak"
		paddleProduct = "pro_01leak"
		lemonVariant  = "4343"
	)
	shop := providertest.NewStripe(t, stripeKey)
	shop.AddProduct(stripeProduct)
	shop.AddCheckout("cs_leak", providers.Item{ProductID: stripeProduct, Quantity: 1})
	shop.AddInvoicePayment("pi_leak_sub", "in_leak")
	pad := providertest.NewPaddle(t, paddleKey)
	pad.AddProduct(paddleProduct)
	pad.AddCustomer("ctm_01leak", buyerEmail)
	lemon := providertest.NewLemonSqueezy(t, lemonKey)
	lemon.AddVariant(lemonVariant, false)

	e := newTestEnvWith(t, envOptions{providers: map[providers.Name]providers.Provider{
		providers.Stripe:       stripe.New(shop.URL(), providerTimeout),
		providers.Paddle:       paddle.New(pad.URL(), providerTimeout),
		providers.LemonSqueezy: lemonsqueezy.New(lemon.URL(), providerTimeout),
	}})
	var answers []*resp
	connect := func(provider providers.Name, key, secret string) string {
		v, err := e.admin.ConnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID, admin.ConnectIntegration{
			Provider: string(provider), Name: "Shop " + string(provider), APIKey: providers.Secret(key), WebhookSecret: providers.Secret(secret)})
		if err != nil {
			t.Fatalf("ConnectIntegration(%s) error = %v", provider, err)
		}
		return v.Integration.ID
	}
	// A key refused on connect: the error's text, cause included, is what
	// the console and the CLI show.
	if _, err := e.admin.ConnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID, admin.ConnectIntegration{
		Provider: "stripe", Name: "Wrong", APIKey: providers.Secret(stripeKey + "x"), WebhookSecret: providers.Secret(stripeSecret)}); err == nil {
		t.Fatal("ConnectIntegration(wrong key) succeeded")
	} else {
		answers = append(answers, &resp{body: []byte(err.Error())})
	}
	stripeInteg := connect(providers.Stripe, stripeKey, stripeSecret)
	paddleInteg := connect(providers.Paddle, paddleKey, paddleSecret)
	lemonInteg := connect(providers.LemonSqueezy, lemonKey, lemonSecret)
	(&integrationEnv{testEnv: e}).addProduct(t, e.org.ID, "desk-app", "DESK")
	key := e.key(t, e.org.ID, licentia.ScopeProviderRead, licentia.ScopeProviderWrite, licentia.ScopeLicencesRead)

	send := func(c call, status int) {
		t.Helper()
		r := e.send(t, c)
		if r.status != status {
			t.Errorf("%s %s = %d, want %d: %s", c.method, c.path, r.status, status, r.body)
		}
		answers = append(answers, r)
	}
	mapping := map[string]any{"product_id": "desk-app"}
	send(call{method: "GET", path: "/v1/admin/integrations", key: key}, http.StatusOK)
	for _, tt := range []struct {
		integ, product string
		fake           interface{ SetOutcome(providertest.Outcome) }
	}{
		{stripeInteg, stripeProduct, shop}, {paddleInteg, paddleProduct, pad}, {lemonInteg, lemonVariant, lemon},
	} {
		send(call{method: "PUT", path: mappingPath(tt.integ, tt.product), key: key, body: mapping}, http.StatusOK)
		send(call{method: "GET", path: "/v1/admin/integrations/" + tt.integ + "/mappings", key: key}, http.StatusOK)
		send(call{method: "PUT", path: mappingPath(tt.integ, "unknown_product"), key: key, body: mapping}, http.StatusBadRequest)
		for outcome, status := range map[providertest.Outcome]int{
			providertest.TokenRefused:     http.StatusUnprocessableEntity,
			providertest.PermissionDenied: http.StatusUnprocessableEntity,
			providertest.ServerError:      http.StatusBadGateway,
		} {
			tt.fake.SetOutcome(outcome)
			send(call{method: "PUT", path: mappingPath(tt.integ, tt.product), key: key, body: mapping}, status)
		}
		tt.fake.SetOutcome(providertest.OK)
		send(call{method: "DELETE", path: mappingPath(tt.integ, "unknown_product"), key: key}, http.StatusNotFound)
	}
	send(call{method: "GET", path: "/v1/admin/integrations/" + someID + "/mappings", key: key}, http.StatusNotFound)
	send(call{method: "PUT", path: mappingPath(someID, stripeProduct), key: key, body: mapping}, http.StatusNotFound)

	now := e.clock.Now()
	stripeBody := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_leak", SessionID: "cs_leak",
		PaymentIntent: "pi_leak", Email: buyerEmail}, now)
	refundBody := providertest.StripeChargeRefundedEvent("evt_leak_refund", "ch_leak", "pi_leak_sub", 4900, 4900, now)
	paddleBody := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_01leak", TransactionID: "txn_01leak",
		CustomerID: "ctm_01leak", Items: []providers.Item{{ProductID: paddleProduct, Quantity: 1}}}, now)
	lemonBody := providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 2002, Identifier: "ord-2002",
		CustomerID: 8, Email: buyerEmail, VariantID: 4343, Quantity: 1, Total: 4900})
	webhook := func(integ string, body []byte, headers map[string]string) call {
		return call{method: "POST", path: webhookPath(integ), body: body, headers: headers}
	}
	stripeSigned := func(body []byte, secret string) call {
		return webhook(stripeInteg, body, map[string]string{"Stripe-Signature": providertest.StripeSignature(body, secret, now)})
	}
	paddleSigned := func(secret string) call {
		return webhook(paddleInteg, paddleBody, map[string]string{"Paddle-Signature": providertest.PaddleSignature(paddleBody, secret, now)})
	}
	lemonSigned := func(secret string) call {
		return webhook(lemonInteg, lemonBody, map[string]string{"X-Event-Name": "order_created",
			"X-Signature": providertest.LemonSqueezySignature(lemonBody, secret)})
	}
	shop.SetOutcome(providertest.ServerError)
	send(stripeSigned(stripeBody, stripeSecret), http.StatusServiceUnavailable)
	shop.SetOutcome(providertest.OK)
	send(stripeSigned(stripeBody, stripeSecret), http.StatusOK)
	send(stripeSigned(refundBody, stripeSecret), http.StatusOK)
	send(stripeSigned(stripeBody, "whsec_another"), http.StatusBadRequest)
	send(webhook(stripeInteg, stripeBody, nil), http.StatusBadRequest)
	send(paddleSigned(paddleSecret), http.StatusOK)
	send(paddleSigned("pdl_ntfset_another"), http.StatusBadRequest)
	send(lemonSigned(lemonSecret), http.StatusOK)
	send(lemonSigned("another"), http.StatusBadRequest)
	// The Stripe integration's secret, sent to the Paddle integration.
	send(webhook(paddleInteg, stripeBody, map[string]string{"Stripe-Signature": providertest.StripeSignature(stripeBody, stripeSecret, now)}), http.StatusBadRequest)
	send(call{method: "GET", path: "/v1/admin/licences?email=" + buyerEmail, key: key}, http.StatusOK)

	logs := e.logs.String()
	// Every webhook call above is logged, refusals and failures with their
	// cause: the lines checked are the ones a leak would be in.
	if n := strings.Count(logs, `"pattern":"POST /v1/providers/{integration_id}/webhooks"`); n != 10 {
		t.Fatalf("webhook log lines = %d, want 10:\n%s", n, logs)
	}
	for _, cred := range []string{stripeKey, stripeSecret, paddleKey, paddleSecret, lemonKey, lemonSecret} {
		for _, form := range credentialForms(cred) {
			for _, line := range strings.Split(logs, "\n") {
				if strings.Contains(line, form) {
					t.Errorf("log line holds %q:\n%s", form, line)
				}
			}
			for _, r := range answers {
				if strings.Contains(string(r.body), form) {
					t.Errorf("answer holds %q:\n%s", form, r.body)
				}
				for k, vs := range r.header {
					for _, v := range vs {
						if strings.Contains(v, form) {
							t.Errorf("answer header %s holds %q", k, form)
						}
					}
				}
			}
		}
	}
	if len(answers) < 30 {
		t.Errorf("answers checked = %d, want every call's", len(answers))
	}
}

package httpapi_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/store"
)

// textMark stands in an event's body for the text a case puts there.
const textMark = "MARK"

// textProvider sends one provider's paid order, signed as the provider
// signs it, with textMark in a string the order stores (the buyer's email,
// or the order id when the email comes from the provider's API).
type textProvider struct {
	name providers.Name
	// env connects the provider to a new env, its product mapped.
	env func(t *testing.T, postgres bool) *providerEnv
	// order is the body of the paid order; the same event every time.
	order func(now time.Time) []byte
	// sign makes the signed request of body.
	sign func(body []byte, now time.Time) call
	// fine is what replaces textMark in the order that is accepted.
	fine string
}

func textProviders() []textProvider {
	const paddleKey = "pdl_sdbx_apikey_01httpshop0000000000000000_q6TGTJyvoIz7LDtXT65bX7_AQO"
	const lemonKey = "ls_test_key_for_http_tests_only"
	return []textProvider{
		{name: providers.Stripe,
			env: func(t *testing.T, postgres bool) *providerEnv {
				e := &providerEnv{integrationEnv: newIntegrationEnv(t, envOptions{postgres: postgres})}
				e.shop.AddCheckout("cs_test_1", providers.Item{ProductID: "prod_pro", Quantity: 1})
				mapProduct(t, e, "prod_pro")
				return e
			},
			order: func(now time.Time) []byte {
				return providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_text", SessionID: "cs_test_1",
					PaymentIntent: "pi_text", Customer: "cus_text", Email: textMark + "@customer.example"}, now)
			},
			sign: func(body []byte, now time.Time) call {
				return call{body: body, headers: map[string]string{"Stripe-Signature": providertest.StripeSignature(body, shopSecret, now)}}
			},
			fine: "buyer"},
		{name: providers.Paddle,
			env: func(t *testing.T, postgres bool) *providerEnv {
				f := providertest.NewPaddle(t, paddleKey)
				f.AddProduct("pro_01httpdesk")
				f.AddCustomer("ctm_01buyer", buyerEmail)
				return connectedEnv(t, postgres, providers.Paddle, paddle.New(f.URL(), providerTimeout), paddleKey, "pro_01httpdesk")
			},
			order: func(now time.Time) []byte {
				return providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_01text", TransactionID: "txn_" + textMark,
					CustomerID: "ctm_01buyer", Items: []providers.Item{{ProductID: "pro_01httpdesk", Quantity: 1}}}, now)
			},
			sign: func(body []byte, now time.Time) call {
				return call{body: body, headers: map[string]string{"Paddle-Signature": providertest.PaddleSignature(body, shopSecret, now)}}
			},
			fine: "01paid"},
		{name: providers.LemonSqueezy,
			env: func(t *testing.T, postgres bool) *providerEnv {
				f := providertest.NewLemonSqueezy(t, lemonKey)
				f.AddVariant("4242", false)
				return connectedEnv(t, postgres, providers.LemonSqueezy, lemonsqueezy.New(f.URL(), providerTimeout), lemonKey, "4242")
			},
			order: func(time.Time) []byte {
				return providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 1001, Identifier: "ord-1001",
					CustomerID: 7, Email: textMark + "@customer.example", VariantID: 4242, Quantity: 1, Total: 4900})
			},
			sign: func(body []byte, _ time.Time) call {
				return call{body: body, headers: map[string]string{"X-Event-Name": "order_created",
					"X-Signature": providertest.LemonSqueezySignature(body, shopSecret)}}
			},
			fine: "buyer"},
	}
}

// connectedEnv is an env connected to provider name through adapter, its
// product mapped to desk-app.
func connectedEnv(t *testing.T, postgres bool, name providers.Name, adapter providers.Provider, key, product string) *providerEnv {
	t.Helper()
	e := &providerEnv{integrationEnv: &integrationEnv{testEnv: newTestEnvWith(t,
		envOptions{postgres: postgres, providers: map[providers.Name]providers.Provider{name: adapter}})}}
	v, err := e.admin.ConnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID,
		admin.ConnectIntegration{Provider: string(name), Name: "Shop", APIKey: providers.Secret(key), WebhookSecret: shopSecret})
	if err != nil {
		t.Fatalf("ConnectIntegration() error = %v", err)
	}
	e.integ = v.Integration.ID
	e.addProduct(t, e.org.ID, "desk-app", "DESK")
	e.key = e.testEnv.key(t, e.org.ID, licentia.ScopeProviderWrite)
	mapProduct(t, e, product)
	return e
}

// mapProduct maps the provider's product to desk-app.
func mapProduct(t *testing.T, e *providerEnv, product string) {
	t.Helper()
	e.run(t, scenario{call: call{method: "PUT", path: mappingPath(e.integ, product), key: e.key,
		body: map[string]any{"product_id": "desk-app"}}, wantStatus: http.StatusOK})
	e.read = e.testEnv.key(t, e.org.ID, licentia.ScopeLicencesRead)
}

// TestProviderWebhookInvalidText: a correctly signed paid order from each
// provider whose body holds text encoding/json would silently replace with
// U+FFFD (bytes that are not UTF-8, a \u escape of half a surrogate pair)
// is refused before it is decoded, the way an order whose email fails the
// email rule is: 400 validation_failed, and nothing is written, not even
// the event's id, so the provider's corrected resend issues the licence.
// On SQLite and PostgreSQL.
func TestProviderWebhookInvalidText(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			for _, p := range textProviders() {
				t.Run(string(p.name), func(t *testing.T) {
					e := p.env(t, engine == "postgres")
					now := e.clock.Now()
					for _, tt := range []struct{ name, text string }{
						{"bytes that are not UTF-8", "\xff\xfe"},
						{"a character cut short", "ab\xc3"},
						{"an encoded surrogate", "\xed\xa0\x80"},
						{"an overlong form", "\xc0\xaf"},
						{"a lone high surrogate escape", `\ud800`},
						{"a lone low surrogate escape", `x\udc00y`},
						{"a high surrogate escape before another", `\ud800\ud800\udc00`},
					} {
						t.Run(tt.name, func(t *testing.T) {
							body := bytes.ReplaceAll(p.order(now), []byte(textMark), []byte(tt.text))
							c := p.sign(body, now)
							c.method, c.path, c.invalid = "POST", webhookPath(e.integ), true
							e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
								wantDetails: issuesAt("", "the event holds text that is not valid UTF-8")})
						})
					}
					if n := e.licenceCount(t, e.org.ID); n != 0 {
						t.Errorf("licences after the refusals = %d, want 0", n)
					}
					if got := e.eventTypes(t); len(got) != 0 {
						t.Errorf("events after the refusals = %v, want none", got)
					}
					// A pair of surrogate escapes is text; the resend issues.
					body := bytes.ReplaceAll(p.order(now), []byte(textMark), []byte(p.fine))
					c := p.sign(body, now)
					c.method, c.path = "POST", webhookPath(e.integ)
					e.run(t, scenario{call: c, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
					if diff := cmp.Diff([]licentia.EventType{licentia.EventLicenceIssued}, e.eventTypes(t)); diff != "" {
						t.Errorf("events after the resend mismatch (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

// TestProviderWebhookEmailRule: the treatment TestProviderWebhookInvalidText
// holds invalid text to, an order whose email fails the email rule, and a
// pair of surrogate escapes, which is text and issues.
func TestProviderWebhookEmailRule(t *testing.T) {
	p := textProviders()[0]
	e := p.env(t, false)
	now := e.clock.Now()
	c := p.sign(bytes.ReplaceAll(p.order(now), []byte(textMark+"@customer.example"), []byte("no address")), now)
	c.method, c.path = "POST", webhookPath(e.integ)
	e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
		wantDetails: issuesAt("/email", "must not contain spaces or control characters")})
	c = p.sign(bytes.ReplaceAll(p.order(now), []byte(textMark), []byte(`\ud83d\ude00`)), now)
	c.method, c.path = "POST", webhookPath(e.integ)
	e.run(t, scenario{call: c, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
	ls, err := e.store.FindLicences(t.Context(), e.org.ID, store.LicenceFilter{Limit: 10}, now)
	if err != nil || len(ls) != 1 || ls[0].Email != "\U0001F600@customer.example" {
		t.Errorf("licences = %+v, %v; want one for \U0001F600@customer.example", ls, err)
	}
}

// TestProviderWebhookInvalidTextFromAPI: Paddle's order names its buyer's
// email only in its customer, fetched from Paddle's API; an answer holding
// text that is not valid UTF-8 refuses the order the same way, and once
// the customer reads well the resend issues. On SQLite and PostgreSQL.
func TestProviderWebhookInvalidTextFromAPI(t *testing.T) {
	const paddleKey = "pdl_sdbx_apikey_01httpshop0000000000000000_q6TGTJyvoIz7LDtXT65bX7_AQO"
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			f := providertest.NewPaddle(t, paddleKey)
			f.AddProduct("pro_01httpdesk")
			f.AddCustomer("ctm_01buyer", "\xff\xfe@customer.example")
			e := connectedEnv(t, engine == "postgres", providers.Paddle, paddle.New(f.URL(), providerTimeout), paddleKey, "pro_01httpdesk")
			now := e.clock.Now()
			body := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_01api", TransactionID: "txn_01api",
				CustomerID: "ctm_01buyer", Items: []providers.Item{{ProductID: "pro_01httpdesk", Quantity: 1}}}, now)
			c := call{method: "POST", path: webhookPath(e.integ), body: body,
				headers: map[string]string{"Paddle-Signature": providertest.PaddleSignature(body, shopSecret, now)}}
			e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
				wantDetails: issuesAt("", "the event holds text that is not valid UTF-8")})
			if n := e.licenceCount(t, e.org.ID); n != 0 {
				t.Errorf("licences after the refusal = %d, want 0", n)
			}
			f.AddCustomer("ctm_01buyer", buyerEmail)
			e.run(t, scenario{call: c, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
			if ls := e.licences(t); len(ls) != 1 {
				t.Errorf("licences of %s after the resend = %d, want 1", buyerEmail, len(ls))
			}
		})
	}
}

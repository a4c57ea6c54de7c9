package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
)

// textMark stands in an event's body for the text a case puts there.
const textMark = "MARK"

// shopProvider sends one provider's paid orders, signed as the provider
// signs them.
type shopProvider struct {
	name providers.Name
	// env connects the provider to a new env, its product mapped to
	// desk-app (limit 1 a unit).
	env func(t *testing.T, postgres bool) *providerEnv
	// paid is the signed request of paid order n (its event and order ids
	// are n's own) of quantity units, bought by email: in the event for
	// Stripe and Lemon Squeezy, as its customer's in Paddle's API for
	// Paddle. email goes into the JSON text as written, so it can hold
	// bytes that are not UTF-8 and \u escapes.
	paid func(t *testing.T, e *providerEnv, n int, email string, quantity int64) call
	// orderID is the order id paid order n's licences carry.
	orderID func(n int) string
	// escapes is true when email reaches the service in the event's body,
	// where \u escapes are read; Paddle's fake answers with the bytes.
	escapes bool
}

const (
	paddleShopKey = "pdl_sdbx_apikey_01httpshop0000000000000000_q6TGTJyvoIz7LDtXT65bX7_AQO"
	lemonShopKey  = "ls_test_key_for_http_tests_only"
)

func shopProviders() []shopProvider {
	var paddleShop *providertest.Paddle
	return []shopProvider{
		{name: providers.Stripe, escapes: true,
			env: func(t *testing.T, postgres bool) *providerEnv {
				e := &providerEnv{integrationEnv: newIntegrationEnv(t, envOptions{postgres: postgres})}
				mapProduct(t, e, "prod_pro")
				return e
			},
			paid: func(t *testing.T, e *providerEnv, n int, email string, quantity int64) call {
				session := fmt.Sprintf("cs_test_%d", n)
				e.shop.AddCheckout(session, providers.Item{ProductID: "prod_pro", Quantity: quantity})
				body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: fmt.Sprintf("evt_text_%d", n), SessionID: session,
					PaymentIntent: fmt.Sprintf("pi_text_%d", n), Customer: "cus_text", Email: textMark}, e.clock.Now())
				body = bytes.Replace(body, []byte(textMark), []byte(email), 1)
				return call{method: "POST", path: webhookPath(e.integ), body: body,
					headers: map[string]string{"Stripe-Signature": providertest.StripeSignature(body, shopSecret, e.clock.Now())}}
			},
			orderID: func(n int) string { return fmt.Sprintf("pi_text_%d", n) }},
		{name: providers.Paddle,
			env: func(t *testing.T, postgres bool) *providerEnv {
				paddleShop = providertest.NewPaddle(t, paddleShopKey)
				paddleShop.AddProduct("pro_01httpdesk")
				return connectedEnv(t, postgres, providers.Paddle, paddle.New(paddleShop.URL(), providerTimeout), paddleShopKey, "pro_01httpdesk")
			},
			paid: func(t *testing.T, e *providerEnv, n int, email string, quantity int64) call {
				customer := fmt.Sprintf("ctm_01text%d", n)
				paddleShop.AddCustomer(customer, email)
				body := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: fmt.Sprintf("evt_01text%d", n),
					TransactionID: fmt.Sprintf("txn_01text%d", n), InvoiceNumber: fmt.Sprintf("INV-%d", n), CustomerID: customer,
					Items: []providers.Item{{ProductID: "pro_01httpdesk", Quantity: quantity}}}, e.clock.Now())
				return call{method: "POST", path: webhookPath(e.integ), body: body,
					headers: map[string]string{"Paddle-Signature": providertest.PaddleSignature(body, shopSecret, e.clock.Now())}}
			},
			orderID: func(n int) string { return fmt.Sprintf("txn_01text%d", n) }},
		{name: providers.LemonSqueezy, escapes: true,
			env: func(t *testing.T, postgres bool) *providerEnv {
				f := providertest.NewLemonSqueezy(t, lemonShopKey)
				f.AddVariant("4242", false)
				return connectedEnv(t, postgres, providers.LemonSqueezy, lemonsqueezy.New(f.URL(), providerTimeout), lemonShopKey, "4242")
			},
			paid: func(t *testing.T, e *providerEnv, n int, email string, quantity int64) call {
				body := providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 1000 + n, Identifier: fmt.Sprintf("ord-%d", n),
					CustomerID: 7, Email: textMark, VariantID: 4242, Quantity: int(quantity), Total: 4900})
				body = bytes.Replace(body, []byte(textMark), []byte(email), 1)
				return call{method: "POST", path: webhookPath(e.integ), body: body, headers: map[string]string{"X-Event-Name": "order_created",
					"X-Signature": providertest.LemonSqueezySignature(body, shopSecret)}}
			},
			orderID: func(n int) string { return strconv.Itoa(1000 + n) }},
	}
}

// invalidTexts are strings encoding/json would silently read as U+FFFD;
// escaped marks the \u escapes, read as such only in an event's body.
var invalidTexts = []struct {
	name, text string
	escaped    bool
}{
	{"bytes that are not UTF-8", "\xff\xfe", false},
	{"a character cut short", "ab\xc3", false},
	{"an encoded surrogate", "\xed\xa0\x80", false},
	{"an overlong form", "\xc0\xaf", false},
	{"a lone high surrogate escape", `\ud800`, true},
	{"a lone low surrogate escape", `x\udc00y`, true},
	{"a high surrogate escape before another", `\ud800\ud800\udc00`, true},
}

// TestProviderWebhookInvalidText: a correctly signed paid order from each
// provider whose buyer's email holds text encoding/json would silently
// replace with U+FFFD (bytes that are not UTF-8, a \u escape of half a
// surrogate pair; for Paddle, in the customer its API answers) is answered
// 200 and held with reason text_invalid, its email null and its raw body
// kept byte for byte: nothing is stored with a replacement character.
// Released without an email it answers 400 at /email; with one it issues.
// A pair of surrogate escapes is text and issues at once. On SQLite and
// PostgreSQL.
func TestProviderWebhookInvalidText(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			for _, p := range shopProviders() {
				t.Run(string(p.name), func(t *testing.T) {
					e := p.env(t, engine == "postgres")
					held := newHeldClient(t, e)
					sent := map[string][]byte{}
					for n, tt := range invalidTexts {
						if tt.escaped && !p.escapes {
							continue
						}
						c := p.paid(t, e, n, tt.text+"@customer.example", 1)
						e.run(t, scenario{name: tt.name, call: c, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
						sent[p.orderID(n)] = c.body.([]byte)
					}
					if n := e.licenceCount(t, e.org.ID); n != 0 {
						t.Errorf("licences after the held orders = %d, want 0", n)
					}
					hs := held.list(t)
					if len(hs) != len(sent) {
						t.Fatalf("held orders = %d, want %d", len(hs), len(sent))
					}
					for _, h := range hs {
						if h.Reason != licentia.HeldTextInvalid || h.Email != nil || h.OrderID == nil || len(h.Items) != 1 {
							t.Errorf("held order %+v, want text_invalid, no email, its order id and item", h)
							continue
						}
						stored, err := e.store.HeldOrder(t.Context(), e.org.ID, h.ID)
						if err != nil || !bytes.Equal(stored.RawBody, sent[*h.OrderID]) {
							t.Errorf("held order %s raw body = %q, %v; want the body as sent", h.ID, stored.RawBody, err)
						}
					}
					held.wantNoReplacement(t)

					first := hs[0]
					held.release(t, first.ID, map[string]any{}, http.StatusBadRequest, licentia.CodeValidationFailed,
						issuesAt("/email", "is required: the order held no readable email"))
					ls := held.release(t, first.ID, map[string]any{"email": buyerEmail}, http.StatusCreated, "", nil)
					if len(ls) != 1 || ls[0].Email != buyerEmail || ls[0].Provider.OrderID == nil || *ls[0].Provider.OrderID != *first.OrderID {
						t.Errorf("released licences = %+v, want one for %s of order %s", ls, buyerEmail, *first.OrderID)
					}
					if got := held.list(t); len(got) != len(hs)-1 {
						t.Errorf("held orders after a release = %d, want %d", len(got), len(hs)-1)
					}
					// A pair of surrogate escapes (or, from Paddle's API, an
					// emoji) is text: the order issues at once.
					e.run(t, scenario{call: p.paid(t, e, 99, `\ud83d\ude00@customer.example`, 1), wantStatus: http.StatusOK})
					if n := e.licenceCount(t, e.org.ID); n != 2 {
						t.Errorf("licences after the release and a fine order = %d, want 2", n)
					}
				})
			}
		})
	}
}

// TestProviderWebhookUnreadableOrderID: an order whose own id is not
// valid UTF-8 cannot be named, so cannot be held: it is refused 400 as
// before, nothing written, not even the event's id, and a corrected resend
// issues.
func TestProviderWebhookUnreadableOrderID(t *testing.T) {
	f := providertest.NewPaddle(t, paddleShopKey)
	f.AddProduct("pro_01httpdesk")
	f.AddCustomer("ctm_01buyer", buyerEmail)
	e := connectedEnv(t, false, providers.Paddle, paddle.New(f.URL(), providerTimeout), paddleShopKey, "pro_01httpdesk")
	send := func(txn string, want int) *resp {
		body := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_01unread", TransactionID: textMark,
			CustomerID: "ctm_01buyer", Items: []providers.Item{{ProductID: "pro_01httpdesk", Quantity: 1}}}, e.clock.Now())
		body = bytes.Replace(body, []byte(textMark), []byte(txn), 1)
		return e.run(t, scenario{call: call{method: "POST", path: webhookPath(e.integ), body: body, invalid: want != http.StatusOK,
			headers: map[string]string{"Paddle-Signature": providertest.PaddleSignature(body, shopSecret, e.clock.Now())}}, wantStatus: want})
	}
	r := send("txn_\xff", http.StatusBadRequest)
	if got := r.apiError(t); got.Code != licentia.CodeValidationFailed {
		t.Errorf("code = %s, want validation_failed", got.Code)
	}
	if hs := newHeldClient(t, e).list(t); len(hs) != 0 || e.licenceCount(t, e.org.ID) != 0 {
		t.Errorf("held orders %d, licences %d after the refusal; want none", len(hs), e.licenceCount(t, e.org.ID))
	}
	send("txn_01fine", http.StatusOK)
	if n := e.licenceCount(t, e.org.ID); n != 1 {
		t.Errorf("licences after the resend = %d, want 1", n)
	}
}

// heldCall is a request to a held-order route.
func heldCall(key, method, id, action string, body any) call {
	path := "/v1/admin/orders/held"
	if id != "" {
		path += "/" + id
	}
	if action != "" {
		path += "/" + action
	}
	return call{method: method, path: path, key: key, body: body}
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

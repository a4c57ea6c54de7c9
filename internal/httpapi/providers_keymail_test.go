package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail/mailtest"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
)

// newKeyMailShop is a providerEnv on either engine whose prod_basic is
// mapped too, to sync-app, with send_key_mail as given.
func newKeyMailShop(t *testing.T, postgres, basicMails bool) *providerEnv {
	t.Helper()
	e := &providerEnv{integrationEnv: newIntegrationEnv(t, envOptions{postgres: postgres})}
	e.addProduct(t, e.org.ID, "sync-app", "SYNC")
	for _, m := range []struct {
		path string
		body map[string]any
	}{
		{"prod_pro", map[string]any{"product_id": "desk-app", "limit_count": 2}},
		{"prod_basic", map[string]any{"product_id": "sync-app", "limit_kind": "machines", "send_key_mail": basicMails}},
	} {
		e.run(t, scenario{call: call{method: "PUT", path: mappingPath(e.integ, m.path), key: e.key, body: m.body}, wantStatus: http.StatusOK})
	}
	e.read = e.testEnv.key(t, e.org.ID, licentia.ScopeLicencesRead, licentia.ScopeAuditRead, licentia.ScopeLicencesWrite)
	return e
}

// keyOf reads a licence's key through the API.
func (e *providerEnv) keyOf(t *testing.T, id string) string {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "GET", path: licencePath(id, ""), key: e.read}, wantStatus: http.StatusOK})
	var v struct {
		LicenceKey string `json:"licence_key"`
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatal(err)
	}
	return v.LicenceKey
}

// TestStripeOrderMailsKeys: a paid Stripe order through the provider fake
// ends with one key mail for the buyer in the outbox, listing each
// licence the order issued, every key and the link on a line of its own;
// the same event again mails nothing more; each licence's audit says its
// key was mailed, never to whom.
func TestStripeOrderMailsKeys(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			e := newKeyMailShop(t, pg, true)
			e.shop.AddCheckout("cs_test_1", providers.Item{ProductID: "prod_pro", Quantity: 1}, providers.Item{ProductID: "prod_basic", Quantity: 3})
			body := providertest.StripeCheckoutEvent(paidCheckout("evt_paid_1"), e.clock.Now())
			e.deliver(t, body, http.StatusOK)
			e.deliver(t, body, http.StatusOK)
			ls := e.licences(t)
			if len(ls) != 2 {
				t.Fatalf("licences = %d, want 2", len(ls))
			}
			le := licenceEnv{testEnv: e.testEnv}
			if n := le.courier(t); n != 1 {
				t.Fatalf("the worker claimed %d mails, want one for the order", n)
			}
			mails := mailtest.Outbox(t, e.outbox)
			if len(mails) != 1 {
				t.Fatalf("outbox holds %d mails, want 1", len(mails))
			}
			m := mails[0]
			if to := m.Header.Get("To"); !strings.Contains(to, buyerEmail) {
				t.Errorf("To = %q, want the buyer", to)
			}
			link := testBaseURL + "/portal/acme/"
			m.CheckStandalone(t, e.keyOf(t, ls[0].ID), e.keyOf(t, ls[1].ID), link, "Limit: 2 seats", "Limit: 3 machines")
			if from, err := m.Header.AddressList("From"); err != nil || from[0].Name != "Org acme" {
				t.Errorf("From = %q, want the organization's display name", m.Header.Get("From"))
			}
			for _, l := range ls {
				if n := le.keyMailed(t, l.ID, buyerEmail); n != 1 {
					t.Errorf("licence %s has %d licence.key_mailed entries, want 1", l.ID, n)
				}
			}
			// The order's mail counts in each licence's limit: 4 more.
			for range 4 {
				e.run(t, scenario{call: sendKeyCall(e.read, ls[0].ID, nil), wantStatus: http.StatusAccepted})
			}
			e.run(t, scenario{call: sendKeyCall(e.read, ls[0].ID, nil), wantStatus: http.StatusTooManyRequests, wantCode: licentia.CodeRateLimited})
		})
	}
}

// TestStripeOrderKeyMailOff: a mapping's send_key_mail false leaves its
// licence out of the order's mail, and an order of only such items mails
// nothing.
func TestStripeOrderKeyMailOff(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			e := newKeyMailShop(t, pg, false)
			e.shop.AddCheckout("cs_test_1", providers.Item{ProductID: "prod_basic", Quantity: 1})
			e.deliver(t, providertest.StripeCheckoutEvent(paidCheckout("evt_paid_1"), e.clock.Now()), http.StatusOK)
			le := licenceEnv{testEnv: e.testEnv}
			if n := le.courier(t); n != 0 {
				t.Errorf("the worker claimed %d mails, want none", n)
			}
			e.shop.AddCheckout("cs_test_2", providers.Item{ProductID: "prod_basic", Quantity: 1}, providers.Item{ProductID: "prod_pro", Quantity: 1})
			second := paidCheckout("evt_paid_2")
			second.SessionID, second.PaymentIntent = "cs_test_2", "pi_test_2"
			e.deliver(t, providertest.StripeCheckoutEvent(second, e.clock.Now()), http.StatusOK)
			if n := le.courier(t); n != 1 {
				t.Fatalf("the worker claimed %d mails, want 1", n)
			}
			text := mailtest.Outbox(t, e.outbox)[0].Text
			if strings.Count(text, "Licence key:") != 1 || strings.Contains(text, "machine") {
				t.Errorf("the mail lists the licence whose mapping mails no key:\n%s", text)
			}
		})
	}
}

// TestPaddleAndLemonSqueezyOrdersMailKeys: as TestStripeOrderMailsKeys, a
// paid order through the Paddle fake and one through the Lemon Squeezy
// fake each end with one key mail to the buyer in the outbox, the key and
// the purchase link each on a line of their own; the buyer then finds the
// purchase by the number on their receipt (Paddle's invoice number, Lemon
// Squeezy's order number). On both engines.
func TestPaddleAndLemonSqueezyOrdersMailKeys(t *testing.T) {
	for _, tt := range []struct {
		name          providers.Name
		env           func(t *testing.T, postgres bool) *providerEnv
		sign          func(now time.Time) call
		order, number string
	}{
		{name: providers.Paddle, order: "txn_01mail", number: "325-20001",
			env: func(t *testing.T, postgres bool) *providerEnv {
				f := providertest.NewPaddle(t, paddleShopKey)
				f.AddProduct("pro_01httpdesk")
				f.AddCustomer("ctm_01buyer", buyerEmail)
				return connectedEnv(t, postgres, providers.Paddle, paddle.New(f.URL(), providerTimeout), paddleShopKey, "pro_01httpdesk")
			},
			sign: func(now time.Time) call {
				body := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_01mail", TransactionID: "txn_01mail",
					InvoiceNumber: "325-20001", CustomerID: "ctm_01buyer", Items: []providers.Item{{ProductID: "pro_01httpdesk", Quantity: 2}}}, now)
				return call{body: body, headers: map[string]string{"Paddle-Signature": providertest.PaddleSignature(body, shopSecret, now)}}
			}},
		{name: providers.LemonSqueezy, order: "2001", number: "77",
			env: func(t *testing.T, postgres bool) *providerEnv {
				f := providertest.NewLemonSqueezy(t, lemonShopKey)
				f.AddVariant("4242", false)
				return connectedEnv(t, postgres, providers.LemonSqueezy, lemonsqueezy.New(f.URL(), providerTimeout), lemonShopKey, "4242")
			},
			sign: func(time.Time) call {
				body := providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 2001, OrderNumber: 77,
					Identifier: "ord-2001", CustomerID: 7, Email: buyerEmail, VariantID: 4242, Quantity: 2, Total: 9800})
				return call{body: body, headers: map[string]string{"X-Event-Name": "order_created",
					"X-Signature": providertest.LemonSqueezySignature(body, shopSecret)}}
			}},
	} {
		t.Run(string(tt.name), func(t *testing.T) {
			bothEngines(t, func(t *testing.T, o envOptions) {
				e := tt.env(t, o.postgres)
				e.read = e.testEnv.key(t, e.org.ID, licentia.ScopeLicencesRead)
				c := tt.sign(e.clock.Now())
				c.method, c.path = "POST", webhookPath(e.integ)
				e.run(t, scenario{call: c, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
				e.run(t, scenario{call: c, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
				ls := e.licences(t)
				if len(ls) != 1 || ls[0].LimitCount != 2 {
					t.Fatalf("licences = %+v, want one of 2 seats", ls)
				}
				le := licenceEnv{testEnv: e.testEnv}
				if n := le.courier(t); n != 1 {
					t.Fatalf("the worker claimed %d mails, want one for the order", n)
				}
				mails := mailtest.Outbox(t, e.outbox)
				if len(mails) != 1 {
					t.Fatalf("outbox holds %d mails, want 1", len(mails))
				}
				if to := mails[0].Header.Get("To"); !strings.Contains(to, buyerEmail) {
					t.Errorf("To = %q, want the buyer", to)
				}
				link := testBaseURL + "/portal/acme/"
				mails[0].CheckStandalone(t, e.keyOf(t, ls[0].ID), link, "Limit: 2 seats")
				r := e.run(t, scenario{call: lookupGet(buyerEmail, tt.number, "198.51.100.30"), wantStatus: http.StatusOK})
				v := decodeStrict[purchaseView](t, r.body)
				if len(v.Purchase.Licences) != 1 || v.Purchase.Licences[0].ID != ls[0].ID || v.Purchase.Licences[0].LicenceKey != e.keyOf(t, ls[0].ID) {
					t.Errorf("lookup by %s = %+v, want licence %s with its key", tt.number, v.Purchase, ls[0].ID)
				}
			})
		})
	}
}

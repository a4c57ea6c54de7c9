package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/sdk"
)

func lookupGetKey(email, key, client string) call {
	q := url.Values{"email": {email}, "licence_key": {key}}
	return lookupGetRaw(q.Encode(), client)
}

// pasted is a key as a buyer may paste it: lower case, without its dashes,
// with whitespace around.
func pasted(key string) string {
	return "  " + strings.ToLower(strings.ReplaceAll(key, "-", "")) + "\n"
}

// TestPurchaseLookupByKey: the email address with a whole licence key finds
// that licence's purchase, in any organization, for a licence issued by
// the maker (order_id null) and one issued through a provider (order_id
// its order id, and that licence alone); the key is read as the
// activation routes read it; on both engines.
func TestPurchaseLookupByKey(t *testing.T) {
	bothEngines(t, func(t *testing.T, o envOptions) {
		e := newLookupEnv(t, o)
		mine := e.issue(t, e.allKey, map[string]any{"product_id": "desk-app", "email": "Buyer@Example.com", "limit_count": 2})
		order := licentia.ProviderRefs{OrderID: new("pi_9"), CheckoutID: new("cs_9")}
		sold := e.sell(t, e.org.ID, e.allKey, map[string]any{"product_id": "desk-app", "email": "buyer@example.com"}, order)
		e.sell(t, e.org.ID, e.allKey, map[string]any{"product_id": "desk-app", "email": "buyer@example.com"}, order)
		other, otherKey := e.otherOrg(t, "globex", "globex-app", "GLBX")
		theirs := e.sell(t, other.ID, otherKey, map[string]any{"product_id": "globex-app", "email": "buyer@example.com"},
			licentia.ProviderRefs{OrderID: new("txn_1")})
		e.activate(t, e.org.ID, mine.Licence.ID, "machine-1")

		byMaker := purchaseBodyOf(t, nil, shown(mine, "Product desk-app", "active", 1))
		for _, tt := range []scenario{
			{name: "GET, issued by the maker", call: lookupGetKey("buyer@example.com", mine.LicenceKey, e.client()), wantBody: byMaker},
			{name: "POST, issued by the maker", call: lookupPost(map[string]any{"email": "BUYER@example.com", "licence_key": mine.LicenceKey},
				e.client()), wantBody: byMaker},
			{name: "pasted key", call: lookupPost(map[string]any{"email": "buyer@example.com", "licence_key": pasted(mine.LicenceKey)},
				e.client()), wantBody: byMaker},
			{name: "through a provider", call: lookupGetKey("buyer@example.com", sold.LicenceKey, e.client()),
				wantBody: purchaseBodyOf(t, new("pi_9"), shown(sold, "Product desk-app", "active", 0))},
			{name: "another organization", call: lookupGetKey("buyer@example.com", theirs.LicenceKey, e.client()),
				wantBody: purchaseBodyOf(t, new("txn_1"), shown(theirs, "Product globex-app", "active", 0))},
		} {
			t.Run(tt.name, func(t *testing.T) {
				tt.wantStatus = http.StatusOK
				if got := e.run(t, tt).header.Get("X-RateLimit-Remaining-lookup"); got != "4" {
					t.Errorf("X-RateLimit-Remaining-lookup = %q, want 4: a lookup by key counts in the lookup limit", got)
				}
			})
		}
	})
}

// purchaseBodyOf is a purchase answer whose order_id may be null.
func purchaseBodyOf(t *testing.T, orderID *string, ls ...purchaseLicenceView) string {
	t.Helper()
	body := purchaseBody(t, "", ls...)
	if orderID == nil {
		return strings.Replace(body, `"order_id":""`, `"order_id":null`, 1)
	}
	return strings.Replace(body, `"order_id":""`, `"order_id":"`+*orderID+`"`, 1)
}

// readCounter counts the reads a purchase lookup makes, by method.
type readCounter struct {
	store.Store
	mu    sync.Mutex
	reads map[string]int
}

func (c *readCounter) count(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads[name]++
}

// take returns the reads counted since the last call.
func (c *readCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.reads
	c.reads = map[string]int{}
	return out
}

func (c *readCounter) LicenceByID(ctx context.Context, id string) (*licentia.Licence, error) {
	c.count("LicenceByID")
	return c.Store.LicenceByID(ctx, id)
}

func (c *readCounter) PurchaseLicences(ctx context.Context, orderID string) ([]licentia.Licence, error) {
	c.count("PurchaseLicences")
	return c.Store.PurchaseLicences(ctx, orderID)
}

func (c *readCounter) Product(ctx context.Context, orgID, id string) (*licentia.Product, error) {
	c.count("Product")
	return c.Store.Product(ctx, orgID, id)
}

func (c *readCounter) AllProducts(ctx context.Context) ([]licentia.Product, error) {
	c.count("AllProducts")
	return c.Store.AllProducts(ctx)
}

// TestPurchaseLookupByKeyMismatch: another address, a key that does not
// verify (made up, edited, of no product), a genuine key of a licence the
// service does not know, the key of an anonymised licence, and an order
// that does not match all answer the same 404 purchase_not_found, byte for
// byte; every mismatch by key makes the same reads, as every mismatch by
// order does.
func TestPurchaseLookupByKeyMismatch(t *testing.T) {
	counter := &readCounter{reads: map[string]int{}}
	e := newLookupEnv(t, envOptions{wrapStore: func(s store.Store) store.Store { counter.Store = s; return counter }})
	live := e.issue(t, e.allKey, map[string]any{"product_id": "desk-app", "email": "buyer@example.com"})
	gone := e.issue(t, e.allKey, map[string]any{"product_id": "desk-app", "email": "gone@example.com"})
	e.run(t, scenario{call: anonymiseCall(e.allKey, gone.Licence.ID, map[string]any{"confirm": true}), wantStatus: http.StatusOK})
	unknown := e.signKey(t, "desk-app", licentia.NewID())
	edited := []byte(live.LicenceKey)
	edited[len(edited)-1] ^= 1

	keyReads := map[string]int{"LicenceByID": 1}
	orderReads := map[string]int{"PurchaseLicences": 1}
	var want []byte
	for _, c := range []struct {
		name  string
		call  call
		reads map[string]int
	}{
		{"another email", lookupGetKey("other@example.com", live.LicenceKey, e.client()), keyReads},
		{"made-up key", lookupGetKey("buyer@example.com", "DESK_NOT-A-KEY", e.client()), keyReads},
		{"edited key", lookupPost(map[string]any{"email": "buyer@example.com", "licence_key": string(edited)}, e.client()), keyReads},
		{"key of no product", lookupGetKey("buyer@example.com", "ZZZZ_"+strings.SplitN(live.LicenceKey, "_", 2)[1], e.client()), keyReads},
		{"unknown licence", lookupGetKey("buyer@example.com", unknown, e.client()), keyReads},
		{"anonymised, by its old address", lookupGetKey("gone@example.com", gone.LicenceKey, e.client()), keyReads},
		{"anonymised, by its erased address", lookupGetKey(gone.Licence.ID+"@anonymised.invalid", gone.LicenceKey, e.client()), keyReads},
		{"key as the order id", lookupGet("buyer@example.com", live.LicenceKey, e.client()), orderReads},
		{"unknown order", lookupGet("buyer@example.com", "pi_unknown", e.client()), orderReads},
	} {
		t.Run(c.name, func(t *testing.T) {
			counter.take()
			r := e.run(t, scenario{call: c.call, wantStatus: http.StatusNotFound, wantCode: licentia.CodePurchaseNotFound})
			if diff := cmp.Diff(c.reads, counter.take()); diff != "" {
				t.Errorf("reads mismatch (-want +got):\n%s", diff)
			}
			if want == nil {
				want = r.body
				return
			}
			if string(r.body) != string(want) {
				t.Errorf("body = %s, want the same as every mismatch: %s", r.body, want)
			}
		})
	}
}

// signKey signs a licence key of the env's product for a licence id, as
// the service would.
func (e *lookupEnv) signKey(t *testing.T, productID, licenceID string) string {
	t.Helper()
	p, err := e.store.Product(t.Context(), e.org.ID, productID)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := e.keys.CurrentPrivate(p)
	if err != nil {
		t.Fatal(err)
	}
	key, err := sdk.SignLicenceKey(priv, p.LicenceSigningDomain, p.KeyPrefix, p.ID, licenceID)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestPurchaseLookupByOrderNumber: a paid Paddle order (its invoice number)
// and a paid Lemon Squeezy order (its order number, not its id) store the
// number as provider.order_number, and the buyer finds the purchase by it
// as by the order id; another address with the number answers 404. On
// both engines.
func TestPurchaseLookupByOrderNumber(t *testing.T) {
	const paddleKey = "pdl_sdbx_apikey_01httpshop0000000000000000_q6TGTJyvoIz7LDtXT65bX7_AQO"
	const lemonKey = "ls_test_key_for_http_tests_only"
	for _, tt := range []struct {
		name          providers.Name
		env           func(t *testing.T, postgres bool) *providerEnv
		sign          func(now time.Time) call
		order, number string
	}{
		{name: providers.Paddle, order: "txn_01paid", number: "325-10566",
			env: func(t *testing.T, postgres bool) *providerEnv {
				f := providertest.NewPaddle(t, paddleKey)
				f.AddProduct("pro_01httpdesk")
				f.AddCustomer("ctm_01buyer", buyerEmail)
				return connectedEnv(t, postgres, providers.Paddle, paddle.New(f.URL(), providerTimeout), paddleKey, "pro_01httpdesk")
			},
			sign: func(now time.Time) call {
				body := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_01paid", TransactionID: "txn_01paid",
					InvoiceNumber: "325-10566", CustomerID: "ctm_01buyer", Items: []providers.Item{{ProductID: "pro_01httpdesk", Quantity: 1}}}, now)
				return call{body: body, headers: map[string]string{"Paddle-Signature": providertest.PaddleSignature(body, shopSecret, now)}}
			}},
		{name: providers.LemonSqueezy, order: "1001", number: "58",
			env: func(t *testing.T, postgres bool) *providerEnv {
				f := providertest.NewLemonSqueezy(t, lemonKey)
				f.AddVariant("4242", false)
				return connectedEnv(t, postgres, providers.LemonSqueezy, lemonsqueezy.New(f.URL(), providerTimeout), lemonKey, "4242")
			},
			sign: func(time.Time) call {
				body := providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 1001, OrderNumber: 58,
					Identifier: "ord-1001", CustomerID: 7, Email: buyerEmail, VariantID: 4242, Quantity: 1, Total: 4900})
				return call{body: body, headers: map[string]string{"X-Event-Name": "order_created",
					"X-Signature": providertest.LemonSqueezySignature(body, shopSecret)}}
			}},
	} {
		t.Run(string(tt.name), func(t *testing.T) {
			bothEngines(t, func(t *testing.T, o envOptions) {
				e := tt.env(t, o.postgres)
				c := tt.sign(e.clock.Now())
				c.method, c.path = "POST", webhookPath(e.integ)
				e.run(t, scenario{call: c, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
				ls := e.licences(t)
				if len(ls) != 1 || ls[0].Provider.OrderID == nil || *ls[0].Provider.OrderID != tt.order ||
					ls[0].Provider.OrderNumber == nil || *ls[0].Provider.OrderNumber != tt.number {
					t.Fatalf("licences = %+v, want one of order %s numbered %s", ls, tt.order, tt.number)
				}
				for i, id := range []string{tt.number, tt.order} {
					r := e.run(t, scenario{call: lookupGet(buyerEmail, id, "198.51.100.1"+string(rune('0'+i))), wantStatus: http.StatusOK})
					v := decodeStrict[purchaseView](t, r.body)
					if v.Purchase.OrderID != id || len(v.Purchase.Licences) != 1 || v.Purchase.Licences[0].ID != ls[0].ID {
						t.Errorf("lookup by %s = %+v, want licence %s", id, v.Purchase, ls[0].ID)
					}
				}
				e.run(t, scenario{call: lookupGet("other@example.com", tt.number, "198.51.100.20"), wantStatus: http.StatusNotFound,
					wantCode: licentia.CodePurchaseNotFound})
			})
		})
	}
}

package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// lookupEnv serves the lookup behind a trusted loopback proxy, so each
// check can come from its own client address with the full allowance.
type lookupEnv struct {
	*licenceEnv
	clients int
}

func newLookupEnv(t *testing.T, o envOptions) *lookupEnv {
	t.Helper()
	o.trustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	return &lookupEnv{licenceEnv: licenceEnvOf(t, newTestEnvWith(t, o))}
}

// client returns a client address not used before in this env.
func (e *lookupEnv) client() string {
	e.clients++
	return fmt.Sprintf("198.51.100.%d", e.clients)
}

// lookupRequestID is sent with every lookup whose whole body is compared.
const lookupRequestID = "lookup-request-0001"

func lookupGet(email, orderID, client string) call {
	q := url.Values{"email": {email}, "order_id": {orderID}}
	return lookupGetRaw(q.Encode(), client)
}

func lookupGetRaw(query, client string) call {
	return call{method: "GET", path: "/v1/purchases/lookup?" + query,
		headers: map[string]string{"X-Forwarded-For": client, "X-Request-Id": lookupRequestID}}
}

func lookupPost(body any, client string) call {
	return call{method: "POST", path: "/v1/purchases/lookup", body: body,
		headers: map[string]string{"X-Forwarded-For": client, "X-Request-Id": lookupRequestID}}
}

// sell issues a licence through the API and gives it a provider's ids
// through the store, as an integration would.
func (e *lookupEnv) sell(t *testing.T, orgID, key string, body map[string]any, refs licentia.ProviderRefs) issuedView {
	t.Helper()
	v := e.issue(t, key, body)
	e.setProvider(t, orgID, v.Licence.ID, refs)
	e.clock.Advance(time.Second)
	return v
}

type purchaseLicenceView struct {
	ID           string      `json:"id"`
	ProductID    string      `json:"product_id"`
	ProductName  string      `json:"product_name"`
	LicenceKey   string      `json:"licence_key"`
	State        string      `json:"state"`
	LimitKind    string      `json:"limit_kind"`
	LimitCount   int64       `json:"limit_count"`
	ExpiresAt    *string     `json:"expires_at"`
	IssuedAt     string      `json:"issued_at"`
	LiveMachines int64       `json:"live_machines"`
	Features     []grantView `json:"features"`
}

type purchaseView struct {
	Purchase struct {
		OrderID  string                `json:"order_id"`
		Licences []purchaseLicenceView `json:"licences"`
	} `json:"purchase"`
}

// shown is what the lookup shows of an issued licence.
func shown(v issuedView, productName, state string, live int64) purchaseLicenceView {
	l := v.Licence
	return purchaseLicenceView{ID: l.ID, ProductID: l.ProductID, ProductName: productName, LicenceKey: v.LicenceKey,
		State: state, LimitKind: l.LimitKind, LimitCount: l.LimitCount, ExpiresAt: l.ExpiresAt, IssuedAt: l.IssuedAt,
		LiveMachines: live, Features: l.Features}
}

func purchaseBody(t *testing.T, orderID string, ls ...purchaseLicenceView) string {
	t.Helper()
	var v purchaseView
	v.Purchase.OrderID, v.Purchase.Licences = orderID, ls
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestPurchaseLookup: an order's licences bought with the address, in
// every organization, oldest first, each with its key, derived state and
// live machines and features; the address matched in any case, the order by its order
// id or its checkout id. Licences of the order bought with another
// address, and a maker's external_ref equal to the order id, are not shown.
func TestPurchaseLookup(t *testing.T) {
	e := newLookupEnv(t, envOptions{})
	order := licentia.ProviderRefs{OrderID: new("pi_3Mtw"), CheckoutID: new("cs_test_a1")}
	expires := licentia.FormatTime(e.clock.Now().Add(time.Hour))
	e.run(t, scenario{call: call{method: "PUT", path: "/v1/admin/products/desk-app/features/export-pdf", key: e.allKey,
		body: map[string]any{"name": "PDF export"}}, wantStatus: http.StatusOK})
	first := e.sell(t, e.org.ID, e.allKey, map[string]any{"product_id": "desk-app", "email": "Buyer@Example.com",
		"limit_count": 5, "features": []any{"export-pdf"}}, order)
	lapsing := e.sell(t, e.org.ID, e.allKey, map[string]any{"product_id": "desk-app", "email": "buyer@example.com",
		"limit_kind": "seats", "expires_at": expires}, licentia.ProviderRefs{OrderID: order.OrderID})
	other, otherKey := e.otherOrg(t, "globex", "globex-app", "GLBX")
	theirs := e.sell(t, other.ID, otherKey, map[string]any{"product_id": "globex-app", "email": "BUYER@example.com"}, order)
	e.sell(t, e.org.ID, e.allKey, map[string]any{"product_id": "desk-app", "email": "partner@example.com"}, order)
	e.issue(t, e.allKey, map[string]any{"product_id": "desk-app", "email": "buyer@example.com", "external_ref": "pi_3Mtw"})
	e.activate(t, e.org.ID, first.Licence.ID, "machine-1")
	e.clock.Advance(2 * time.Hour)

	all := purchaseBody(t, "pi_3Mtw",
		shown(first, "Product desk-app", "active", 1),
		shown(lapsing, "Product desk-app", "expired", 0),
		shown(theirs, "Product globex-app", "active", 0))
	for _, tt := range []scenario{
		{name: "GET", call: lookupGet("buyer@example.com", "pi_3Mtw", e.client()), wantBody: all},
		{name: "POST", call: lookupPost(map[string]any{"email": "buyer@example.com", "order_id": "pi_3Mtw"}, e.client()), wantBody: all},
		{name: "email in another case", call: lookupGet("bUYER@EXAMPLE.COM", "pi_3Mtw", e.client()), wantBody: all},
		{name: "checkout id", call: lookupPost(map[string]any{"email": "buyer@example.com", "order_id": "cs_test_a1"}, e.client()),
			wantBody: purchaseBody(t, "cs_test_a1", shown(first, "Product desk-app", "active", 1),
				shown(theirs, "Product globex-app", "active", 0))},
		{name: "another buyer of the order", call: lookupGet("partner@example.com", "cs_test_a1", e.client()),
			wantBody: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.wantStatus = http.StatusOK
			r := e.run(t, tt)
			for _, h := range []string{"X-RateLimit-Limit-lookup", "X-RateLimit-Remaining-lookup", "X-RateLimit-Reset-lookup"} {
				if r.header.Get(h) == "" {
					t.Errorf("header %s missing", h)
				}
			}
			if tt.wantBody == "" {
				v := decodeStrict[purchaseView](t, r.body)
				if len(v.Purchase.Licences) != 1 || v.Purchase.Licences[0].ID == first.Licence.ID {
					t.Errorf("another buyer of the order sees %+v, want only their own licence", v.Purchase.Licences)
				}
			}
		})
	}
}

// TestPurchaseLookupMismatch: an unknown order, another address, an order
// id of another case, an order whose licences were all anonymised, and a
// maker's external_ref all answer the same 404 purchase_not_found, byte
// for byte (the request id is the same one sent each time).
func TestPurchaseLookupMismatch(t *testing.T) {
	e := newLookupEnv(t, envOptions{})
	e.sell(t, e.org.ID, e.allKey, map[string]any{"product_id": "desk-app", "email": "buyer@example.com"},
		licentia.ProviderRefs{OrderID: new("pi_live")})
	gone := e.sell(t, e.org.ID, e.allKey, map[string]any{"product_id": "desk-app", "email": "gone@example.com"},
		licentia.ProviderRefs{OrderID: new("pi_gone"), CheckoutID: new("cs_gone")})
	e.run(t, scenario{call: anonymiseCall(e.allKey, gone.Licence.ID, map[string]any{"confirm": true}), wantStatus: http.StatusOK})
	e.issue(t, e.allKey, map[string]any{"product_id": "desk-app", "email": "buyer@example.com", "external_ref": "ref_1"})

	var want []byte
	for _, c := range []struct {
		name string
		call call
	}{
		{"unknown order", lookupGet("buyer@example.com", "pi_unknown", e.client())},
		{"another email", lookupGet("other@example.com", "pi_live", e.client())},
		{"email of another order", lookupPost(map[string]any{"email": "gone@example.com", "order_id": "pi_live"}, e.client())},
		{"order id in another case", lookupPost(map[string]any{"email": "buyer@example.com", "order_id": "PI_LIVE"}, e.client())},
		{"anonymised, by its old address", lookupGet("gone@example.com", "pi_gone", e.client())},
		{"anonymised, by its erased address", lookupGet(gone.Licence.ID+"@anonymised.invalid", "pi_gone", e.client())},
		{"external_ref", lookupGet("buyer@example.com", "ref_1", e.client())},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.run(t, scenario{call: c.call, wantStatus: http.StatusNotFound, wantCode: licentia.CodePurchaseNotFound})
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

// TestPurchaseLookupRateLimit: one lookup limit of 5 a minute per client
// address, shared by the GET and the POST; the 6th answers 429 with
// Retry-After-lookup; another address is counted apart; the window resets
// on the minute.
func TestPurchaseLookupRateLimit(t *testing.T) {
	e := newLookupEnv(t, envOptions{})
	client := e.client()
	get := lookupGet("buyer@example.com", "pi_1", client)
	post := lookupPost(map[string]any{"email": "buyer@example.com", "order_id": "pi_1"}, client)
	for i, c := range []call{get, post, get, post, get} {
		r := e.run(t, scenario{call: c, wantStatus: http.StatusNotFound, wantCode: licentia.CodePurchaseNotFound})
		wantLookupHeaders(t, r, fmt.Sprint(4-i))
	}
	r := e.run(t, scenario{call: post, wantStatus: http.StatusTooManyRequests, wantCode: licentia.CodeRateLimited})
	wantLookupHeaders(t, r, "0")
	if got := r.header.Get("Retry-After-lookup"); got != "60" {
		t.Errorf("Retry-After-lookup = %q, want 60", got)
	}
	e.run(t, scenario{call: get, wantStatus: http.StatusTooManyRequests, wantCode: licentia.CodeRateLimited})
	e.run(t, scenario{call: lookupGet("buyer@example.com", "pi_1", e.client()), wantStatus: http.StatusNotFound})
	e.clock.Advance(time.Minute)
	wantLookupHeaders(t, e.run(t, scenario{call: post, wantStatus: http.StatusNotFound}), "4")
}

// wantLookupHeaders checks the lookup limit's headers, and that no other
// limit's are sent.
func wantLookupHeaders(t *testing.T, r *resp, remaining string) {
	t.Helper()
	for name, want := range map[string]string{
		"X-RateLimit-Limit-lookup": "5", "X-RateLimit-Remaining-lookup": remaining, "X-RateLimit-Reset-lookup": "60",
	} {
		if got := r.header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for name := range r.header {
		if strings.HasSuffix(name, "-Public") || strings.HasSuffix(name, "-Admin") {
			t.Errorf("header %s sent on a lookup", name)
		}
	}
}

// TestPurchaseLookupRefused: 400 validation_failed with every issue at
// query.<name> for the GET and /<name> for the POST (exactly one of
// order_id and licence_key, at query or the whole body), and 413 for a
// body over 64 KB.
func TestPurchaseLookupRefused(t *testing.T) {
	e := newLookupEnv(t, envOptions{})
	const printable = "must be 1 to 200 printable ASCII characters"
	const oneOf = "give exactly one of order_id and licence_key"
	for _, tt := range []scenario{
		{name: "GET empty", call: lookupGetRaw("", ""), wantDetails: issues(
			"query.email", "is required", "query", oneOf)},
		{name: "GET order id and key", call: lookupGetRaw("email=a@b.co&order_id=1&licence_key=DESK_1", ""), wantDetails: issues(
			"query", oneOf)},
		{name: "GET key too long", call: lookupGetRaw("email=a@b.co&licence_key="+strings.Repeat("A", 1025), ""), wantDetails: issues(
			"query.licence_key", "must be 1 to 1024 characters")},
		{name: "GET bad values", call: lookupGet("buyer", strings.Repeat("x", 201), ""), wantDetails: issues(
			"query.email", "must contain exactly one @", "query.order_id", printable)},
		{name: "GET control character", call: lookupGet("buyer@example.com", "pi\n1", ""), wantDetails: issues(
			"query.order_id", printable)},
		{name: "GET not ASCII", call: lookupGet("buyer@example.com", "pi_é", ""), wantDetails: issues(
			"query.order_id", printable)},
		{name: "GET unknown and repeated", call: lookupGetRaw("email=a@b.co&email=a@b.co&order_id=1&page=2", ""), wantDetails: issues(
			"query.email", "must be given once", "query.page", "unknown parameter", "query.email", "is required")},
		{name: "POST empty object", call: lookupPost(map[string]any{}, ""), wantDetails: issues(
			"/email", "is required", "", oneOf)},
		{name: "POST order id and key", call: lookupPost(map[string]any{"email": "a@b.co", "order_id": "1", "licence_key": "DESK_1"}, ""),
			wantDetails: issues("", oneOf)},
		{name: "POST empty key", call: lookupPost(map[string]any{"email": "a@b.co", "licence_key": ""}, ""), wantDetails: issues(
			"/licence_key", "must be 1 to 1024 characters")},
		{name: "POST key of the wrong type", call: lookupPost(map[string]any{"email": "a@b.co", "licence_key": 7}, ""), wantDetails: issues(
			"/licence_key", "must be a string")},
		{name: "POST wrong types", call: lookupPost(map[string]any{"email": 1, "order_id": nil}, ""), wantDetails: issues(
			"/email", "must be a string", "/order_id", "must be a string")},
		{name: "POST empty order id", call: lookupPost(map[string]any{"email": "a@b.co", "order_id": ""}, ""), wantDetails: issues(
			"/order_id", printable)},
		{name: "POST unknown field", call: lookupPost(map[string]any{"email": "a@b.co", "order_id": "1", "name": "x"}, ""),
			wantDetails: issues("/name", "unknown field")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.call.headers["X-Forwarded-For"] = e.client()
			tt.call.invalid = true
			tt.wantStatus, tt.wantCode = http.StatusBadRequest, licentia.CodeValidationFailed
			e.run(t, tt)
		})
	}
	t.Run("POST over 64 KB", func(t *testing.T) {
		body := paddedBody(`{"email":"a@b.co","order_id":"1"}`, 65537)
		c := lookupPost(body, e.client())
		c.invalid = true
		r := e.run(t, scenario{call: c, wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge})
		wantLookupHeaders(t, r, "4")
	})
}

// failingLookups fails the purchase read, as a database gone away would.
type failingLookups struct{ store.Store }

func (failingLookups) PurchaseLicences(context.Context, string) ([]licentia.Licence, error) {
	return nil, errDiskGone
}

// TestPurchaseLookupNeverLogged: the email address and the order id reach
// no log line, whatever the answer: 200, 404, 400, 413, 429 and 500.
func TestPurchaseLookupNeverLogged(t *testing.T) {
	const email, orderID = "Zed.Buyer@Example.org", "pi_3NlogTestOrder77"
	e := newLookupEnv(t, envOptions{})
	e.sell(t, e.org.ID, e.allKey, map[string]any{"product_id": "desk-app", "email": email},
		licentia.ProviderRefs{OrderID: new(orderID)})
	client := e.client()
	for _, c := range []struct {
		call   call
		status int
	}{
		{lookupGet(email, orderID, client), http.StatusOK},
		{lookupPost(map[string]any{"email": email, "order_id": orderID}, client), http.StatusOK},
		{lookupGet("other@example.org", orderID, client), http.StatusNotFound},
		{lookupGet(email, orderID+"x", client), http.StatusNotFound},
		{lookupPost(map[string]any{"email": email, "order_id": orderID + "\n"}, client), http.StatusBadRequest},
		{lookupGet(email, orderID, client), http.StatusTooManyRequests},
		{lookupPost(paddedBody(`{"email":"`+email+`","order_id":"`+orderID+`"}`, 70000), e.client()), http.StatusRequestEntityTooLarge},
	} {
		c.call.invalid = c.status == http.StatusBadRequest || c.status == http.StatusRequestEntityTooLarge
		e.run(t, scenario{call: c.call, wantStatus: c.status})
	}
	broken := newLookupEnv(t, envOptions{wrapStore: func(s store.Store) store.Store { return failingLookups{s} }})
	r := broken.run(t, scenario{call: lookupGet(email, orderID, broken.client()), wantStatus: http.StatusInternalServerError,
		wantCode: licentia.CodeInternal})

	logs := e.logs.String() + broken.logs.String()
	if !strings.Contains(logs, `"pattern":"GET /v1/purchases/lookup"`) || !strings.Contains(broken.logs.String(), errDiskGone.Error()) ||
		!strings.Contains(broken.logs.String(), r.header.Get("X-Request-Id")) {
		t.Fatalf("the lookups' log lines were not captured:\n%s", logs)
	}
	lower := strings.ToLower(logs)
	for _, secret := range []string{email, orderID, "zed.buyer", "example.org", url.QueryEscape(email)} {
		if strings.Contains(lower, strings.ToLower(secret)) {
			t.Errorf("a log line carries %q:\n%s", secret, logs)
		}
	}
}

package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// sell issues a licence to email and gives it a provider order id, as an
// integration would.
func (e *env) sell(t *testing.T, productID, email, orderID string) *licentia.Licence {
	t.Helper()
	v := e.issue(t, e.org.ID, productID, email)
	err := e.store.InTx(t.Context(), func(tx store.Tx) error {
		before, err := tx.LockLicence(t.Context(), e.org.ID, v.Licence.ID)
		if err != nil {
			return err
		}
		after := *before
		after.Provider.OrderID = &orderID
		return tx.UpdateLicence(t.Context(), &after)
	})
	if err != nil {
		t.Fatal(err)
	}
	l := *v.Licence
	l.Provider.OrderID = &orderID
	return &l
}

// buyer is a client of the customer page from its own client address.
func (e *env) buyer(addr string) *client {
	c := e.client()
	c.headers["X-Forwarded-For"] = addr
	return c
}

var requestIDLine = regexp.MustCompile(`(?i)request [0-9a-f-]{36}`)

// The customer page shows a purchase's keys and machines to whoever knows
// the buyer's address and the order id, and frees a machine with the
// audit actor {type: customer, id: null} and the event
// activation.deactivated.
func TestCustomerPage(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		l := e.sell(t, "desk-app", "Buyer@Example.com", "ord_1001")
		key, err := e.admin.Licence(t.Context(), e.org.ID, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		a1 := e.activate(t, *key.Key, "machine-a")
		e.activate(t, *key.Key, "machine-b")
		other := e.issue(t, e.org.ID, "desk-app", "someone@example.com")
		theirs := e.activate(t, *other.Key, "machine-z")

		c := e.buyer("198.51.100.20")
		page := c.get(t, "/console/purchase?email=buyer%40example.com&order_id=ord_1001")
		wantStatus(t, "customer page", page, http.StatusOK)
		if !strings.Contains(page.body, `value="buyer@example.com"`) || strings.Contains(page.body, *key.Key) {
			t.Fatalf("the form is not filled from the link, or it shows a key before the form is sent:\n%s", page.body)
		}
		a := c.post(t, "/console/purchase", url.Values{"email": {"buyer@example.com"}, "order_id": {"ord_1001"}})
		wantStatus(t, "lookup", a, http.StatusOK)
		for _, want := range []string{*key.Key, "Product desk-app", "machine-a", "machine-b", `name="activation" value="` + a1.ID + `"`} {
			if !strings.Contains(a.body, want) {
				t.Errorf("purchase page lacks %q:\n%s", want, a.body)
			}
		}
		if strings.Contains(a.body, "machine-z") || strings.Contains(a.body, *other.Key) {
			t.Error("purchase page shows another purchase's licence")
		}

		// Every mismatch answers the same page but for what was typed.
		typed := func(email, order string) string {
			a := e.buyer("198.51.100.21").post(t, "/console/purchase", url.Values{"email": {email}, "order_id": {order}})
			wantStatus(t, "mismatch", a, http.StatusNotFound)
			b := requestIDLine.ReplaceAllString(a.body, "")
			b = strings.ReplaceAll(b, url.QueryEscape(email), "EMAIL")
			return strings.ReplaceAll(strings.ReplaceAll(b, email, "EMAIL"), order, "ORDER")
		}
		unknownOrder := typed("buyer@example.com", "ord_9999")
		if wrongEmail := typed("thief@example.com", "ord_1001"); wrongEmail != unknownOrder {
			t.Errorf("a wrong address and an unknown order answer differently:\n%s\n----\n%s", wrongEmail, unknownOrder)
		}
		if !strings.Contains(unknownOrder, "No purchase matches this email address and order id or licence key.") {
			t.Errorf("mismatch page lacks the message:\n%s", unknownOrder)
		}

		// Freeing a machine of another purchase, or with a wrong address,
		// frees nothing.
		for _, form := range []url.Values{
			{"email": {"buyer@example.com"}, "order_id": {"ord_1001"}, "activation": {theirs.ID}},
			{"email": {"thief@example.com"}, "order_id": {"ord_1001"}, "activation": {a1.ID}},
		} {
			wantStatus(t, "free another's machine", e.buyer("198.51.100.22").post(t, "/console/purchase/free", form), http.StatusNotFound)
		}
		a = c.post(t, "/console/purchase/free", url.Values{"email": {"buyer@example.com"}, "order_id": {"ord_1001"}, "activation": {a1.ID}})
		wantStatus(t, "free", a, http.StatusOK)
		if !strings.Contains(a.body, "The machine was freed.") || strings.Contains(a.body, "machine-a") || !strings.Contains(a.body, "machine-b") {
			t.Errorf("after freeing machine-a the page does not show it gone:\n%s", a.body)
		}
		got := e.lastAudit(t)
		if got.Action != licentia.AuditActivationDeactivated || got.Actor.Type != licentia.ActorCustomer || got.Actor.ID != nil {
			t.Errorf("audit entry = %s by %+v, want activation.deactivated by {customer, null}", got.Action, got.Actor)
		}
		if evs := e.events(t); evs[len(evs)-1] != licentia.EventActivationDeactivated {
			t.Errorf("last event = %s, want activation.deactivated", evs[len(evs)-1])
		}
		if act, err := e.store.Activation(t.Context(), e.org.ID, theirs.ID); err != nil || !act.IsLive() {
			t.Errorf("another purchase's machine was freed: %+v, %v", act, err)
		}
	})
}

// The customer page finds a licence the maker issued by the buyer's
// address and its key, pasted in the key field, and frees its machines
// with the same proof; both an order number and a key, or neither, are
// refused with the API's message.
func TestCustomerPageByKey(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		v := e.issue(t, e.org.ID, "desk-app", "buyer@example.com")
		a := e.activate(t, *v.Key, "machine-a")
		c := e.buyer("198.51.100.30")
		page := c.get(t, "/console/purchase")
		if !strings.Contains(page.body, `name="licence_key"`) {
			t.Fatalf("the form has no licence key field:\n%s", page.body)
		}
		proof := url.Values{"email": {"Buyer@example.com"}, "order_id": {""}, "licence_key": {" " + strings.ToLower(*v.Key) + " "}}
		found := c.post(t, "/console/purchase", proof)
		wantStatus(t, "lookup by key", found, http.StatusOK)
		for _, want := range []string{*v.Key, "Your licence", "machine-a", `href="/portal/acme/"`} {
			if !strings.Contains(found.body, want) {
				t.Errorf("purchase page lacks %q:\n%s", want, found.body)
			}
		}
		proof.Set("activation", a.ID)
		freed := c.post(t, "/console/purchase/free", proof)
		wantStatus(t, "free by key", freed, http.StatusOK)
		if !strings.Contains(freed.body, "The machine was freed.") {
			t.Errorf("freeing a machine proved by key did not free it:\n%s", freed.body)
		}
		for _, form := range []url.Values{
			{"email": {"buyer@example.com"}, "order_id": {"ord_1"}, "licence_key": {*v.Key}},
			{"email": {"buyer@example.com"}, "order_id": {""}, "licence_key": {""}},
		} {
			refused := e.buyer("198.51.100.31").post(t, "/console/purchase", form)
			wantStatus(t, "order and key", refused, http.StatusBadRequest)
			if !strings.Contains(refused.body, "give exactly one of order_id and licence_key") {
				t.Errorf("refusal lacks the message:\n%s", refused.body)
			}
		}
	})
}

// The customer page counts in the API's lookup limit, 5 a minute per
// client address, shared with both API routes.
func TestCustomerPageLookupLimit(t *testing.T) {
	e := newEnv(t, envOptions{proxies: loopbackProxy})
	api := httptest.NewServer(httpapi.New(httpapi.Options{
		Store: e.store, Admin: e.admin, Activation: e.act, Purchases: e.purchases, Auth: auth.NewAuthenticator(e.store, e.clock),
		Limiter: e.limiter, Clock: e.clock, Logger: slogDiscard(), TrustedProxies: loopbackProxy,
	}))
	t.Cleanup(api.Close)
	const addr = "198.51.100.30"
	apiLookup := func() int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, api.URL+"/v1/purchases/lookup?email=a%40example.com&order_id=o", nil)
		req.Header.Set("X-Forwarded-For", addr)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	c := e.buyer(addr)
	lookup := url.Values{"email": {"a@example.com"}, "order_id": {"o"}}
	for range 3 {
		wantStatus(t, "console lookup", c.post(t, "/console/purchase", lookup), http.StatusNotFound)
	}
	for range 2 {
		if s := apiLookup(); s != http.StatusNotFound {
			t.Fatalf("API lookup = %d, want 404", s)
		}
	}
	a := c.post(t, "/console/purchase", lookup)
	wantStatus(t, "sixth lookup, from the console", a, http.StatusTooManyRequests)
	if s := apiLookup(); s != http.StatusTooManyRequests {
		t.Errorf("seventh lookup, from the API = %d, want 429", s)
	}
	wantStatus(t, "a freeing counts too", c.post(t, "/console/purchase/free", url.Values{"email": {"a@example.com"},
		"order_id": {"o"}, "activation": {licentia.NewID()}}), http.StatusTooManyRequests)
	wantStatus(t, "another address", e.buyer("198.51.100.31").post(t, "/console/purchase", lookup), http.StatusNotFound)
	// Showing the form counts nothing.
	wantStatus(t, "the form", c.get(t, "/console/purchase"), http.StatusOK)
}

// The customer page wears the branding of the organization behind the
// purchase: its name, logo (allowed by the page's policy), accent and
// support address; "Licentia" only in the "powered by" line.
func TestCustomerPageBranded(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		logo, accent, support := "https://cdn.zoe.example/logo.png", "#aa3300", "help@zoe.example"
		err := e.store.InTx(t.Context(), func(tx store.Tx) error {
			return tx.SetBranding(t.Context(), e.org.ID, licentia.Branding{DisplayName: new("Zoe Tools"),
				LogoURL: &logo, Accent: &accent, SupportEmail: &support})
		})
		if err != nil {
			t.Fatal(err)
		}
		v := e.issue(t, e.org.ID, "desk-app", "buyer@example.com")
		c := e.buyer("198.51.100.40")
		blank := c.get(t, "/console/purchase")
		if strings.Contains(strings.ReplaceAll(blank.body, "Powered by Licentia", ""), "Licentia") {
			t.Errorf("the customer page names Licentia beyond the powered-by line:\n%s", blank.body)
		}
		found := c.post(t, "/console/purchase", url.Values{"email": {"buyer@example.com"}, "order_id": {""}, "licence_key": {*v.Key}})
		wantStatus(t, "lookup", found, http.StatusOK)
		for _, want := range []string{"<title>Your purchase · Zoe Tools</title>", `<img src="` + logo + `" alt="Zoe Tools">`,
			`href="/portal/acme/brand.css"`, "mailto:" + support, "Powered by Licentia"} {
			if !strings.Contains(found.body, want) {
				t.Errorf("branded purchase page lacks %q:\n%s", want, found.body)
			}
		}
		if rest := strings.ReplaceAll(found.body, "Powered by Licentia", ""); strings.Contains(rest, "Licentia") {
			t.Errorf("the branded page names Licentia beyond the powered-by line:\n%s", found.body)
		}
		if csp := found.header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' https://cdn.zoe.example;") {
			t.Errorf("Content-Security-Policy = %q, want the logo's origin in img-src", csp)
		}
	})
}

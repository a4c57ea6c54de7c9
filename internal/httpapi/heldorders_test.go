package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
)

// heldClient calls the held-order routes of e's organization with a key
// holding provider:read and provider:write.
type heldClient struct {
	e   *providerEnv
	key string
}

func newHeldClient(t *testing.T, e *providerEnv) *heldClient {
	t.Helper()
	return &heldClient{e: e, key: e.testEnv.key(t, e.org.ID, licentia.ScopeProviderRead, licentia.ScopeProviderWrite)}
}

// list answers the organization's held orders.
func (h *heldClient) list(t *testing.T) []events.HeldOrder {
	t.Helper()
	r := h.e.run(t, scenario{call: heldCall(h.key, "GET", "", "", nil), wantStatus: http.StatusOK})
	var got struct {
		HeldOrders []events.HeldOrder `json:"held_orders"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	return got.HeldOrders
}

// release releases held order id with body and answers the licences it
// issued; a failure is checked against code and details.
func (h *heldClient) release(t *testing.T, id string, body any, status int, code licentia.Code, details map[string]any) []events.Licence {
	t.Helper()
	r := h.e.run(t, scenario{call: heldCall(h.key, "POST", id, "release", body), wantStatus: status, wantCode: code, wantDetails: details})
	if status != http.StatusCreated {
		return nil
	}
	var got struct {
		Licences []events.Licence `json:"licences"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	return got.Licences
}

// wantNoReplacement fails when the held-order list or any event of the
// organization holds U+FFFD, as bytes or as an escape.
func (h *heldClient) wantNoReplacement(t *testing.T) {
	t.Helper()
	r := h.e.run(t, scenario{call: heldCall(h.key, "GET", "", "", nil), wantStatus: http.StatusOK})
	bodies := [][]byte{r.body}
	evs, err := h.e.store.OrganizationEvents(t.Context(), h.e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		bodies = append(bodies, ev.Body)
	}
	for _, b := range bodies {
		if bytes.Contains(b, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`)) {
			t.Errorf("stored with a replacement character: %s", b)
		}
	}
}

// TestHeldOrderReasons: on each provider and engine, a paid order whose
// email fails the email rule and one whose limit × quantity is over the
// maximum are answered 200 and held, each once however often it is sent,
// with order.held; a release whose corrections still cannot issue answers
// 400 at the field and the order stays held; corrected, each is released
// once, as the order would have issued (its provider ids, its key mail),
// then leaves the list and answers 404.
func TestHeldOrderReasons(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			for _, p := range shopProviders() {
				t.Run(string(p.name), func(t *testing.T) {
					e := p.env(t, engine == "postgres")
					held := newHeldClient(t, e)
					badEmail := p.paid(t, e, 1, "no address", 1)
					tooLarge := p.paid(t, e, 2, buyerEmail, licentia.MaxLimitCount+1)
					for range 2 {
						e.run(t, scenario{call: badEmail, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
						e.run(t, scenario{call: tooLarge, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
					}
					hs := held.list(t)
					if len(hs) != 2 {
						t.Fatalf("held orders = %+v, want 2", hs)
					}
					// Held at one instant, they are listed by id: put them in
					// the order sent.
					slices.SortFunc(hs, func(a, b events.HeldOrder) int { return strings.Compare(*a.OrderID, *b.OrderID) })
					wantHeldEvents(t, e, hs)
					desk := "desk-app"
					wantItem := func(q int64) []licentia.HeldItem {
						return []licentia.HeldItem{{ProviderProductID: mappedProduct(string(p.name)), Quantity: q, ProductID: &desk}}
					}
					if h := hs[0]; h.Reason != licentia.HeldEmailInvalid || h.Email == nil || *h.Email != "no address" ||
						*h.OrderID != p.orderID(1) || h.Provider != string(p.name) || h.IntegrationID != e.integ {
						t.Errorf("first held order = %+v, want email_invalid of order %s for no address", h, p.orderID(1))
					} else if diff := cmp.Diff(wantItem(1), h.Items); diff != "" {
						t.Errorf("items (-want +got):\n%s", diff)
					}
					if h := hs[1]; h.Reason != licentia.HeldLimitTooLarge || *h.OrderID != p.orderID(2) {
						t.Errorf("second held order = %+v, want limit_too_large of order %s", h, p.orderID(2))
					} else if diff := cmp.Diff(wantItem(licentia.MaxLimitCount+1), h.Items); diff != "" {
						t.Errorf("items (-want +got):\n%s", diff)
					}
					if n := e.licenceCount(t, e.org.ID); n != 0 {
						t.Fatalf("licences of held orders = %d, want 0", n)
					}

					held.release(t, hs[0].ID, nil, http.StatusBadRequest, licentia.CodeValidationFailed,
						issuesAt("/email", "must not contain spaces or control characters"))
					held.release(t, hs[1].ID, map[string]any{}, http.StatusBadRequest, licentia.CodeValidationFailed,
						issuesAt("/limit_count", "is required: the mapping's limit × the quantity bought is over 4294967295"))
					if got := held.list(t); len(got) != 2 {
						t.Fatalf("held orders after refused releases = %d, want 2", len(got))
					}
					ls := held.release(t, hs[0].ID, map[string]any{"email": buyerEmail}, http.StatusCreated, "", nil)
					ls = append(ls, held.release(t, hs[1].ID, map[string]any{"limit_count": 5}, http.StatusCreated, "", nil)...)
					if len(ls) != 2 || ls[0].Email != buyerEmail || ls[0].LimitCount != 1 || ls[1].LimitCount != 5 ||
						*ls[0].Provider.OrderID != p.orderID(1) || *ls[1].Provider.OrderID != p.orderID(2) ||
						ls[0].Source != licentia.SourceProvider || *ls[0].IntegrationID != e.integ {
						t.Errorf("released licences = %+v, want limits 1 and 5 of orders 1 and 2 from the provider", ls)
					}
					le := licenceEnv{testEnv: e.testEnv}
					if n := le.courier(t); n != 2 {
						t.Errorf("key mails sent = %d, want one per released order", n)
					}
					if got := held.list(t); len(got) != 0 {
						t.Errorf("held orders after the releases = %+v, want none", got)
					}
					held.release(t, hs[0].ID, map[string]any{"email": buyerEmail}, http.StatusNotFound, licentia.CodeNotFound, nil)
					e.run(t, scenario{call: heldCall(held.key, "DELETE", hs[1].ID, "", nil), wantStatus: http.StatusNotFound, wantCode: licentia.CodeNotFound})
					// The provider sending a released order again holds and
					// issues nothing more.
					e.run(t, scenario{call: p.paid(t, e, 1, "no address", 1), wantStatus: http.StatusOK})
					if n, hs := e.licenceCount(t, e.org.ID), held.list(t); n != 2 || len(hs) != 0 {
						t.Errorf("after a resend: %d licences, %d held orders; want 2 and none", n, len(hs))
					}
				})
			}
		})
	}
}

// mappedProduct is the provider product shopProviders map to desk-app.
func mappedProduct(name string) string {
	return map[string]string{"stripe": "prod_pro", "paddle": "pro_01httpdesk", "lemonsqueezy": "4242"}[name]
}

// wantHeldEvents checks that the organization's events are one order.held
// per held order of hs, in order, each with the held order as the API
// shows it.
func wantHeldEvents(t *testing.T, e *providerEnv, hs []events.HeldOrder) {
	t.Helper()
	evs, err := e.store.OrganizationEvents(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []events.HeldOrder
	for _, ev := range evs {
		var b struct {
			Type licentia.EventType `json:"type"`
			Data struct {
				HeldOrder events.HeldOrder `json:"held_order"`
			} `json:"data"`
		}
		if err := json.Unmarshal(ev.Body, &b); err != nil || b.Type != licentia.EventOrderHeld || ev.LicenceID != nil {
			t.Errorf("event %s of type %s, licence %v: %v; want order.held of no licence", ev.Body, ev.Type, ev.LicenceID, err)
		}
		got = append(got, b.Data.HeldOrder)
	}
	if diff := cmp.Diff(hs, got); diff != "" {
		t.Errorf("order.held events (-want +got):\n%s", diff)
	}
}

// TestHeldOrderDrop: a dropped order leaves the list, issues nothing, and
// then answers 404 to a release and to a drop; another organization's
// key finds no held order of this one, and cannot release or drop it.
func TestHeldOrderDrop(t *testing.T) {
	p := shopProviders()[0]
	e := p.env(t, false)
	held := newHeldClient(t, e)
	e.run(t, scenario{call: p.paid(t, e, 1, "no address", 1), wantStatus: http.StatusOK})
	e.run(t, scenario{call: p.paid(t, e, 2, "still no address", 1), wantStatus: http.StatusOK})
	hs := held.list(t)
	if len(hs) != 2 {
		t.Fatalf("held orders = %d, want 2", len(hs))
	}

	other := e.createOrg(t, "globex", licentia.PlanBusiness)
	theirs := &heldClient{e: e, key: e.testEnv.key(t, other.ID, licentia.ScopeProviderRead, licentia.ScopeProviderWrite)}
	if got := theirs.list(t); len(got) != 0 {
		t.Errorf("another organization's held orders = %+v, want none", got)
	}
	theirs.release(t, hs[0].ID, map[string]any{"email": buyerEmail}, http.StatusNotFound, licentia.CodeNotFound, nil)
	e.run(t, scenario{call: heldCall(theirs.key, "DELETE", hs[0].ID, "", nil), wantStatus: http.StatusNotFound, wantCode: licentia.CodeNotFound})
	readOnly := e.testEnv.key(t, e.org.ID, licentia.ScopeProviderRead)
	e.run(t, scenario{call: heldCall(readOnly, "DELETE", hs[0].ID, "", nil), wantStatus: http.StatusForbidden,
		wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"provider:write"}}})

	e.run(t, scenario{call: heldCall(held.key, "DELETE", hs[0].ID, "", nil), wantStatus: http.StatusNoContent})
	if got := held.list(t); len(got) != 1 || got[0].ID != hs[1].ID {
		t.Errorf("held orders after the drop = %+v, want the second alone", got)
	}
	e.run(t, scenario{call: heldCall(held.key, "DELETE", hs[0].ID, "", nil), wantStatus: http.StatusNotFound, wantCode: licentia.CodeNotFound})
	held.release(t, hs[0].ID, map[string]any{"email": buyerEmail}, http.StatusNotFound, licentia.CodeNotFound, nil)
	if n := e.licenceCount(t, e.org.ID); n != 0 {
		t.Errorf("licences after the drop = %d, want 0", n)
	}
	audit, err := e.store.OrganizationAudit(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range audit {
		if strings.HasPrefix(a.Action, "order.") {
			actions = append(actions, a.Action)
			if bytes.Contains(a.Data, []byte("address")) {
				t.Errorf("audit entry %s holds the buyer's address: %s", a.Action, a.Data)
			}
		}
	}
	if diff := cmp.Diff([]string{licentia.AuditOrderHeld, licentia.AuditOrderHeld, licentia.AuditOrderDropped}, actions); diff != "" {
		t.Errorf("audit actions (-want +got):\n%s", diff)
	}
}

// TestHeldOrderReleaseRequest: the release's body is strict JSON (unknown
// fields, a limit out of range, an email failing the rule, an add-on
// licence for an order that is no add-on: 400 at the field, the order
// still held), and Idempotency-Key replays the release's answer without
// issuing twice.
func TestHeldOrderReleaseRequest(t *testing.T) {
	p := shopProviders()[0]
	e := p.env(t, false)
	held := newHeldClient(t, e)
	e.run(t, scenario{call: p.paid(t, e, 1, "no address", 1), wantStatus: http.StatusOK})
	id := held.list(t)[0].ID
	for _, tt := range []struct {
		body    any
		details map[string]any
	}{
		{map[string]any{"emails": buyerEmail}, issuesAt("/emails", "unknown field")},
		{map[string]any{"limit_count": 0}, issuesAt("/limit_count", "must be an integer from 1 to 4294967295")},
		{map[string]any{"email": "a b@example.com"}, issuesAt("/email", "must not contain spaces or control characters")},
		{map[string]any{"adds_to_licence_id": "nope"}, issuesAt("/adds_to_licence_id", "must be a licence id")},
		{map[string]any{"adds_to_licence_id": someID}, issuesAt("/adds_to_licence_id", "is only for an add-on order with no licence to add to")},
		{`{"email":"` + buyerEmail + `","email":"x@example.com"}`, issuesAt("/email", "duplicate field")},
	} {
		c := heldCall(held.key, "POST", id, "release", tt.body)
		c.invalid = true
		e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: tt.details})
	}
	c := heldCall(held.key, "POST", id, "release", map[string]any{"email": buyerEmail})
	c.headers = map[string]string{"Idempotency-Key": "release-once"}
	first := e.run(t, scenario{call: c, wantStatus: http.StatusCreated})
	again := e.run(t, scenario{call: c, wantStatus: http.StatusCreated})
	wantReplay(t, first, again)
	if n := e.licenceCount(t, e.org.ID); n != 1 {
		t.Errorf("licences after a replayed release = %d, want 1", n)
	}
}

// TestOrderHeldEventSubscribable: an endpoint may subscribe to order.held
// alone; a held order queues it that event, and a release's licence.issued
// goes to endpoints subscribed to that.
func TestOrderHeldEventSubscribable(t *testing.T) {
	p := shopProviders()[0]
	e := p.env(t, false)
	hooks := e.testEnv.key(t, e.org.ID, licentia.ScopeWebhooksWrite)
	r := e.run(t, scenario{call: call{method: "POST", path: "/v1/admin/webhooks", key: hooks,
		body: map[string]any{"url": "https://hooks.example.com/licentia", "event_types": []string{"order.held"}}},
		wantStatus: http.StatusCreated})
	var added struct {
		Endpoint struct {
			ID string `json:"id"`
		} `json:"webhook_endpoint"`
	}
	if err := json.Unmarshal(r.body, &added); err != nil {
		t.Fatal(err)
	}
	e.run(t, scenario{call: p.paid(t, e, 1, "no address", 1), wantStatus: http.StatusOK})
	held := newHeldClient(t, e)
	held.release(t, held.list(t)[0].ID, map[string]any{"email": buyerEmail}, http.StatusCreated, "", nil)
	ds, err := e.store.Deliveries(t.Context(), e.org.ID, added.Endpoint.ID, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].EventType != licentia.EventOrderHeld {
		t.Errorf("deliveries = %+v, want one of order.held", ds)
	}
}

// TestHeldOrderTooManyItems: an order of more items than an order may
// have is refused 400 as before, not held as a limit to correct, however
// near the body limit it comes.
func TestHeldOrderTooManyItems(t *testing.T) {
	f := providertest.NewPaddle(t, paddleShopKey)
	f.AddProduct("pro_01httpdesk")
	f.AddCustomer("ctm_01buyer", buyerEmail)
	e := connectedEnv(t, false, providers.Paddle, paddle.New(f.URL(), providerTimeout), paddleShopKey, "pro_01httpdesk")
	var items []providers.Item
	for range 300 {
		items = append(items, providers.Item{ProductID: "pro_01httpdesk", Quantity: 1})
	}
	body := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_01many", TransactionID: "txn_01many",
		CustomerID: "ctm_01buyer", Items: items}, e.clock.Now())
	if len(body) < 32<<10 || len(body) > 64<<10 {
		t.Fatalf("body of %d bytes, want one near the 64 KB limit", len(body))
	}
	c := call{method: "POST", path: webhookPath(e.integ), body: body, invalid: true,
		headers: map[string]string{"Paddle-Signature": providertest.PaddleSignature(body, shopSecret, e.clock.Now())}}
	e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
		wantDetails: issuesAt("/items", "must be at most 100")})
	if hs := newHeldClient(t, e).list(t); len(hs) != 0 {
		t.Errorf("held orders = %+v, want none", hs)
	}
}

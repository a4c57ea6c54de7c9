package integration

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
)

const (
	shopKey    = "sk_test_51IntegrationShopKeyOnly"
	shopSecret = "whsec_IntegrationShopWebhookSecret"
	buyerEmail = "buyer@customer.example"
	// providerScopes are what the test reads and maps with, on top of
	// scopes.
	providerScopes = "licences:read,audit:read,provider:read,provider:write"
)

// stripeRequest is the request Stripe sends to the integration's webhook
// route on p: body, signed now.
func stripeRequest(t *testing.T, p *process, integ string, body []byte) *http.Request {
	t.Helper()
	req, err := providertest.NewStripeRequest(t.Context(), p.url("/v1/providers/"+integ+"/webhooks"), shopSecret, time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// send sends req and returns the status, or the error when no answer came.
func send(req *http.Request) (int, error) {
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// A process killed (kill -9) while it handles a paid Stripe checkout, after
// the signature check and before the licence is committed, never answers
// 200; Stripe sends the event again, and again, and the buyer gets exactly
// one licence, issued once.
func TestProviderWebhookSurvivesKilledProcess(t *testing.T) {
	s := newService(t)
	s.useRedis(t)
	shop := providertest.NewStripe(t, shopKey)
	shop.AddProduct("prod_pro")
	shop.AddCheckout("cs_crash_1", providers.Item{ProductID: "prod_pro", Quantity: 1})
	s.env["LICENTIA_STRIPE_API_URL"] = shop.URL()
	rcv := newReceiver(t, 0, "a")
	a := s.start(t, "a", rcv.settings("a"))
	waitReady(t, a)

	s.newOrg(t, "shop")
	k := s.operator(t, "apikey", "create", "--org", "shop", "--name", "provider", "--scopes", scopes+","+providerScopes)
	key, _ := k["key"].(string)
	if key == "" {
		t.Fatalf("apikey create printed no key: %v", k)
	}
	dir := t.TempDir()
	keyFile, secretFile := filepath.Join(dir, "stripe.key"), filepath.Join(dir, "stripe.whsec")
	for f, v := range map[string]string{keyFile: shopKey, secretFile: shopSecret} {
		if err := os.WriteFile(f, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	integ, _ := s.operator(t, "integration", "connect", "--org", "shop", "--provider", "stripe", "--name", "Shop",
		"--api-key-file", keyFile, "--webhook-secret-file", secretFile)["id"].(string)
	if integ == "" {
		t.Fatal("integration connect printed no id")
	}
	createProduct(t, a, key, "desk-app", "DESK")
	a.must(t, http.StatusOK, "PUT", "/v1/admin/integrations/"+integ+"/mappings/prod_pro", key, map[string]any{
		"product_id": "desk-app", "limit_count": 1,
	})
	ep := a.must(t, http.StatusCreated, "POST", "/v1/admin/webhooks", key, map[string]any{
		"url": hookURL, "event_types": []string{string(licentia.EventLicenceIssued)},
	}).object("webhook_endpoint")
	endpoint, _ := ep["id"].(string)

	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_crash_1", SessionID: "cs_crash_1",
		PaymentIntent: "pi_crash_1", Customer: "cus_crash_1", Email: buyerEmail}, time.Now())

	// Stripe's API hangs: a is killed while it waits for the line items,
	// after the signature check and before anything is committed.
	shop.SetOutcome(providertest.Hang)
	type result struct {
		status int
		err    error
	}
	first := make(chan result, 1)
	req := stripeRequest(t, a, integ, body)
	go func() {
		status, err := send(req)
		first <- result{status, err}
	}()
	eventually(t, "a asking Stripe for the line items", 10*time.Second, 5*time.Millisecond, func() bool {
		calls := shop.Requests()
		return len(calls) > 0 && calls[len(calls)-1] == "GET /v1/checkout/sessions/cs_crash_1/line_items"
	})
	a.kill()
	if r := <-first; r.err == nil {
		t.Fatalf("the first delivery was answered %d by a killed process", r.status)
	}

	a.restart(t)
	waitReady(t, a)
	licences := func() []any {
		ls, _ := a.must(t, http.StatusOK, "GET", "/v1/admin/licences?email="+url.QueryEscape(buyerEmail), key, nil).body["licences"].([]any)
		return ls
	}
	// The killed request's transaction was never committed.
	if ls := licences(); len(ls) != 0 {
		t.Fatalf("buyer's licences after the kill = %d, want 0: %v", len(ls), ls)
	}
	shop.SetOutcome(providertest.OK)
	// Stripe sends again what was not answered 2xx, with a new signature,
	// and may send it once more.
	for i := range 2 {
		status, err := send(stripeRequest(t, a, integ, body))
		if err != nil || status != http.StatusOK {
			t.Fatalf("delivery %d after the restart: status %d, error %v; want 200", i+2, status, err)
		}
	}

	ls := licences()
	if len(ls) != 1 {
		t.Fatalf("buyer's licences = %d, want 1: %v", len(ls), ls)
	}
	l, _ := ls[0].(map[string]any)
	id, _ := l["id"].(string)
	if p, _ := l["provider"].(map[string]any); p["order_id"] != "pi_crash_1" || l["integration_id"] != integ || l["product_id"] != "desk-app" {
		t.Errorf("licence %v, want desk-app for order pi_crash_1 through %s", l, integ)
	}
	issued := 0
	entries, _ := a.must(t, http.StatusOK, "GET", "/v1/admin/licences/"+id+"/audit", key, nil).body["events"].([]any)
	for _, e := range entries {
		if e, _ := e.(map[string]any); e["action"] == licentia.AuditLicenceIssued {
			issued++
		}
	}
	if issued != 1 {
		t.Errorf("licence.issued audit entries = %d, want 1", issued)
	}

	// One licence.issued event: one delivery queued, answered by the
	// receiver for this licence.
	eventually(t, "licence.issued answered", 10*time.Second, 20*time.Millisecond, func() bool {
		return len(rcv.missing([]string{id})) == 0
	})
	ds, _ := a.must(t, http.StatusOK, "GET", "/v1/admin/webhooks/"+endpoint+"/deliveries", key, nil).body["deliveries"].([]any)
	if rec := rcv.record(); len(ds) != 1 || len(rec.arrived) != 1 {
		t.Errorf("deliveries = %d, events at the receiver = %d; want one licence.issued", len(ds), len(rec.arrived))
	}
}

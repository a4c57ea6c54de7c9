package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
)

const buyerEmail = "buyer@customer.example"

// providerEnv is an integrationEnv whose Stripe product prod_pro is mapped
// to desk-app (2 seats per unit, a renewal URL) and prod_basic is not
// mapped; read is a key that reads licences.
type providerEnv struct {
	*integrationEnv
	read string
}

func newProviderEnv(t *testing.T) *providerEnv {
	t.Helper()
	e := &providerEnv{integrationEnv: newIntegrationEnv(t, envOptions{})}
	e.run(t, scenario{call: call{method: "PUT", path: mappingPath(e.integ, "prod_pro"), key: e.key,
		body: map[string]any{"product_id": "desk-app", "limit_count": 2, "renewal_url": "https://shop.example/renew"}},
		wantStatus: http.StatusOK})
	e.read = e.testEnv.key(t, e.org.ID, licentia.ScopeLicencesRead, licentia.ScopeAuditRead)
	return e
}

func webhookPath(integ string) string { return "/v1/providers/" + integ + "/webhooks" }

// stripeCall is the request Stripe sends for body, signed under secret at
// at.
func stripeCall(integ, secret string, at time.Time, body []byte) call {
	return call{method: "POST", path: webhookPath(integ), body: body,
		headers: map[string]string{"Stripe-Signature": providertest.StripeSignature(body, secret, at)}}
}

// deliver sends a Stripe event signed now with the integration's secret.
func (e *providerEnv) deliver(t *testing.T, body []byte, wantStatus int) *resp {
	t.Helper()
	r := e.run(t, scenario{call: stripeCall(e.integ, shopSecret, e.clock.Now(), body), wantStatus: wantStatus})
	if wantStatus == http.StatusOK && strings.TrimSpace(string(r.body)) != `{"received":true}` {
		t.Errorf("answer = %s, want {\"received\":true}", r.body)
	}
	return r
}

// licences lists the buyer's licences, oldest first.
func (e *providerEnv) licences(t *testing.T) []events.Licence {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/licences?email=" + buyerEmail, key: e.read}, wantStatus: http.StatusOK})
	var got struct {
		Licences []events.Licence `json:"licences"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(got.Licences, func(a, b events.Licence) int { return strings.Compare(a.IssuedAt, b.IssuedAt) })
	return got.Licences
}

// eventTypes lists the organization's events.
func (e *providerEnv) eventTypes(t *testing.T) []licentia.EventType {
	t.Helper()
	evs, err := e.store.OrganizationEvents(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []licentia.EventType
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func paidCheckout(eventID string) providertest.StripeCheckout {
	return providertest.StripeCheckout{EventID: eventID, SessionID: "cs_test_1", PaymentIntent: "pi_test_1",
		Customer: "cus_test_1", Email: buyerEmail}
}

// TestProviderWebhookStripeCheckout walks from a paid Stripe checkout to
// an activated key: one licence per mapped item × quantity, unmapped items
// skipped; the same event again changes nothing; the buyer finds the
// licence by purchase lookup and activates it.
func TestProviderWebhookStripeCheckout(t *testing.T) {
	e := newProviderEnv(t)
	e.shop.AddCheckout("cs_test_1", providers.Item{ProductID: "prod_pro", Quantity: 3}, providers.Item{ProductID: "prod_basic", Quantity: 1})
	body := providertest.StripeCheckoutEvent(paidCheckout("evt_paid_1"), e.clock.Now())
	e.deliver(t, body, http.StatusOK)
	ls := e.licences(t)
	if len(ls) != 1 {
		t.Fatalf("licences = %d, want 1 (prod_basic is not mapped)", len(ls))
	}
	l := ls[0]
	want := events.Licence{ID: l.ID, ProductID: "desk-app", Email: buyerEmail, LimitKind: licentia.LimitSeats,
		LimitCount: 6, Status: l.Status, State: l.State, Major: l.Major, Source: licentia.SourceProvider,
		IntegrationID: &e.integ, RenewalURL: new("https://shop.example/renew"), IssuedAt: l.IssuedAt,
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt, Provider: events.Provider{OrderID: new("pi_test_1"),
			CheckoutID: new("cs_test_1"), CustomerID: new("cus_test_1")}, Features: []events.Grant{}}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("licence mismatch (-want +got):\n%s", diff)
	}
	if l.Status != licentia.StatusActive || l.ExpiresAt != nil {
		t.Errorf("status %s, expires_at %v; want active, no expiry", l.Status, l.ExpiresAt)
	}
	if diff := cmp.Diff([]licentia.EventType{licentia.EventLicenceIssued}, e.eventTypes(t)); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}

	// Stripe sends again what it thinks was not received.
	e.deliver(t, body, http.StatusOK)
	if got := len(e.licences(t)); got != 1 {
		t.Errorf("licences after the repeat = %d, want 1", got)
	}
	if got := len(e.eventTypes(t)); got != 1 {
		t.Errorf("events after the repeat = %d, want 1", got)
	}

	// The buyer finds the key by the order id in the receipt, and activates.
	r := e.run(t, scenario{call: lookupPost(map[string]any{"email": strings.ToUpper(buyerEmail), "order_id": "pi_test_1"}, "198.51.100.7"),
		wantStatus: http.StatusOK})
	var found struct {
		Purchase struct {
			Licences []struct {
				ID         string `json:"id"`
				LicenceKey string `json:"licence_key"`
			} `json:"licences"`
		} `json:"purchase"`
	}
	if err := json.Unmarshal(r.body, &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Purchase.Licences) != 1 || found.Purchase.Licences[0].ID != l.ID {
		t.Fatalf("lookup found %s, want licence %s", r.body, l.ID)
	}
	e.run(t, scenario{call: call{method: "POST", path: "/v1/activations", body: map[string]any{
		"licence_key": found.Purchase.Licences[0].LicenceKey, "machine_id": "machine-0001", "label": "Desk",
		"os": "linux", "app_version": "1.0.0"}}, wantStatus: http.StatusCreated})

	for _, s := range []string{buyerEmail, "pi_test_1", "cs_test_1", shopSecret, shopKey, "v1="} {
		if strings.Contains(e.logs.String(), s) {
			t.Errorf("the log holds %q", s)
		}
	}
}

// TestProviderWebhookRefused: every request not proved to come from a
// connected integration's provider answers the same 400 but for
// request_id, and writes nothing.
func TestProviderWebhookRefused(t *testing.T) {
	e := newProviderEnv(t)
	e.shop.AddCheckout("cs_test_1", providers.Item{ProductID: "prod_pro", Quantity: 1})
	gone := e.connect(t, e.org.ID, "Gone")
	if err := e.admin.DisconnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID, gone); err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	body := providertest.StripeCheckoutEvent(paidCheckout("evt_refused"), now)
	unsigned := stripeCall(e.integ, shopSecret, now, body)
	delete(unsigned.headers, "Stripe-Signature")
	changed := stripeCall(e.integ, shopSecret, now, body)
	changed.body = append(slices.Clone(body[:len(body)-1]), ' ', '}')
	for _, tt := range []struct {
		name string
		c    call
	}{
		{"no signature", unsigned},
		{"wrong secret", stripeCall(e.integ, "whsec_another", now, body)},
		{"changed body", changed},
		{"stale timestamp", stripeCall(e.integ, shopSecret, now.Add(-providers.SignatureTolerance-time.Second), body)},
		{"future timestamp", stripeCall(e.integ, shopSecret, now.Add(providers.SignatureTolerance+time.Second), body)},
		{"unknown integration", stripeCall(someID, shopSecret, now, body)},
		{"disconnected integration", stripeCall(gone, shopSecret, now, body)},
		{"malformed integration id", stripeCall("not-a-uuid", shopSecret, now, body)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(t, scenario{call: tt.c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeWebhookSignatureInvalid})
			got := r.json(t).(map[string]any)
			delete(got["error"].(map[string]any), "request_id")
			want := map[string]any{"error": map[string]any{"code": "webhook_signature_invalid", "message": "The webhook signature is missing or invalid."}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if got := len(e.licences(t)); got != 0 {
		t.Errorf("licences = %d, want 0", got)
	}
	if got := e.shop.Requests(); slices.Contains(got, "GET /v1/checkout/sessions/cs_test_1/line_items") {
		t.Errorf("Stripe was asked for line items of a refused event: %v", got)
	}
}

// TestProviderWebhookNoMasterKey: a process that shares the database but
// cannot load the master key cannot open an integration's webhook secret,
// so a connected integration's webhook answers 503
// integrations_not_configured whatever its signature, and the provider
// sends it again; an unknown, disconnected or malformed integration id
// still gets the one 400 every refusal gets. Nothing is written and Stripe
// is not called.
func TestProviderWebhookNoMasterKey(t *testing.T) {
	e := newProviderEnv(t)
	e.shop.AddCheckout("cs_test_1", providers.Item{ProductID: "prod_pro", Quantity: 1})
	gone := e.connect(t, e.org.ID, "Gone")
	if err := e.admin.DisconnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID, gone); err != nil {
		t.Fatal(err)
	}
	noKeys := newTestEnvWith(t, envOptions{shareStore: e.testEnv, noMasterKey: true,
		providers: map[providers.Name]providers.Provider{providers.Stripe: stripe.New(e.shop.URL(), providerTimeout)}})
	now := e.clock.Now()
	body := providertest.StripeCheckoutEvent(paidCheckout("evt_no_master"), now)
	for _, tt := range []struct {
		name   string
		c      call
		status int
		code   licentia.Code
	}{
		{"signed", stripeCall(e.integ, shopSecret, now, body), http.StatusServiceUnavailable, licentia.CodeIntegrationsNotConfigured},
		{"wrong secret", stripeCall(e.integ, "whsec_another", now, body), http.StatusServiceUnavailable, licentia.CodeIntegrationsNotConfigured},
		{"unknown integration", stripeCall(someID, shopSecret, now, body), http.StatusBadRequest, licentia.CodeWebhookSignatureInvalid},
		{"disconnected integration", stripeCall(gone, shopSecret, now, body), http.StatusBadRequest, licentia.CodeWebhookSignatureInvalid},
		{"malformed integration id", stripeCall("not-a-uuid", shopSecret, now, body), http.StatusBadRequest, licentia.CodeWebhookSignatureInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			noKeys.run(t, scenario{call: tt.c, wantStatus: tt.status, wantCode: tt.code})
		})
	}
	if got := len(e.licences(t)); got != 0 {
		t.Fatalf("licences = %d, want 0", got)
	}
	if got := e.shop.Requests(); slices.Contains(got, "GET /v1/checkout/sessions/cs_test_1/line_items") {
		t.Errorf("Stripe was asked for line items without a master key: %v", got)
	}
	// The event was not recorded: its resend to a process with the key
	// issues the licence.
	e.deliver(t, body, http.StatusOK)
	if got := len(e.licences(t)); got != 1 {
		t.Errorf("licences after the resend = %d, want 1", got)
	}
}

// TestProviderWebhookUnhandled: an event type with no effect answers 200
// and changes nothing.
func TestProviderWebhookUnhandled(t *testing.T) {
	e := newProviderEnv(t)
	body := []byte(`{"id":"evt_invoice","object":"event","type":"invoice.paid","created":1,"data":{"object":{"id":"in_1","object":"invoice"}}}`)
	e.deliver(t, body, http.StatusOK)
	e.deliver(t, body, http.StatusOK)
	if got := len(e.eventTypes(t)); got != 0 {
		t.Errorf("events = %d, want 0", got)
	}
}

// TestProviderWebhookTooLarge: a body over 64 KB answers 413 before the
// signature is looked at.
func TestProviderWebhookTooLarge(t *testing.T) {
	e := newProviderEnv(t)
	e.run(t, scenario{call: call{method: "POST", path: webhookPath(someID), body: paddedBody(`{"id":"evt_big"}`, 65537)},
		wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge})
}

// TestProviderWebhookLineItemsUnavailable: while Stripe's line-items call
// fails the event answers 503 and writes nothing, not even its id; Stripe's
// resend after the API recovers issues the licence once.
func TestProviderWebhookLineItemsUnavailable(t *testing.T) {
	e := newProviderEnv(t)
	e.shop.AddCheckout("cs_test_1", providers.Item{ProductID: "prod_pro", Quantity: 1})
	body := providertest.StripeCheckoutEvent(paidCheckout("evt_paid_503"), e.clock.Now())
	e.shop.SetOutcome(providertest.ServerError)
	e.run(t, scenario{call: stripeCall(e.integ, shopSecret, e.clock.Now(), body),
		wantStatus: http.StatusServiceUnavailable, wantCode: licentia.CodeServiceUnavailable})
	if got := len(e.licences(t)); got != 0 {
		t.Fatalf("licences after 503 = %d, want 0", got)
	}
	e.shop.SetOutcome(providertest.OK)
	e.clock.Advance(time.Minute)
	e.deliver(t, body, http.StatusOK)
	e.deliver(t, body, http.StatusOK)
	if got := len(e.licences(t)); got != 1 {
		t.Errorf("licences after the resend = %d, want 1", got)
	}
}

// TestProviderWebhookRefund: a full refund revokes the order's licences
// with reason provider:stripe:refund; a partial one changes nothing; a
// refund that arrives before its order is applied when the order arrives.
func TestProviderWebhookRefund(t *testing.T) {
	e := newProviderEnv(t)
	e.shop.AddCheckout("cs_test_1", providers.Item{ProductID: "prod_pro", Quantity: 1})
	e.shop.AddCheckout("cs_test_2", providers.Item{ProductID: "prod_pro", Quantity: 1})
	e.deliver(t, providertest.StripeCheckoutEvent(paidCheckout("evt_paid_1"), e.clock.Now()), http.StatusOK)
	e.deliver(t, providertest.StripeChargeRefundedEvent("evt_partial", "ch_1", "pi_test_1", 4900, 1000, e.clock.Now()), http.StatusOK)
	if l := e.licences(t)[0]; l.Status != licentia.StatusActive {
		t.Errorf("after a partial refund status = %s, want active", l.Status)
	}
	e.deliver(t, providertest.StripeChargeRefundedEvent("evt_full", "ch_1", "pi_test_1", 4900, 4900, e.clock.Now()), http.StatusOK)
	l := e.licences(t)[0]
	if l.Status != licentia.StatusRevoked || l.StatusReason == nil || *l.StatusReason != "provider:stripe:refund" {
		t.Errorf("after a full refund status = %s, reason %v; want revoked, provider:stripe:refund", l.Status, l.StatusReason)
	}

	// The refund of the second order arrives first.
	e.clock.Advance(time.Second)
	e.deliver(t, providertest.StripeChargeRefundedEvent("evt_early", "ch_2", "pi_test_2", 4900, 4900, e.clock.Now()), http.StatusOK)
	second := paidCheckout("evt_paid_2")
	second.SessionID, second.PaymentIntent = "cs_test_2", "pi_test_2"
	e.deliver(t, providertest.StripeCheckoutEvent(second, e.clock.Now()), http.StatusOK)
	ls := e.licences(t)
	if len(ls) != 2 || ls[1].Status != licentia.StatusRevoked {
		t.Fatalf("licences = %+v, want the second issued revoked", ls)
	}
	want := []licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceRevoked, licentia.EventLicenceIssued, licentia.EventLicenceRevoked}
	if diff := cmp.Diff(want, e.eventTypes(t)); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// TestProviderWebhookSubscription: a trialing subscription's checkout
// issues a trial licence; its conversion clears the trial; its deletion
// expires the licence.
func TestProviderWebhookSubscription(t *testing.T) {
	e := newProviderEnv(t)
	trialEnd := e.clock.Now().Add(14 * 24 * time.Hour).Truncate(time.Second)
	e.shop.AddCheckout("cs_sub", providers.Item{ProductID: "prod_pro", Quantity: 1})
	e.shop.AddSubscription("sub_1", providertest.StripeSubscription{Status: "trialing", TrialEnd: trialEnd})
	e.deliver(t, providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_sub", SessionID: "cs_sub",
		Invoice: "in_1", Subscription: "sub_1", Customer: "cus_test_1", Email: buyerEmail, PaymentStatus: "no_payment_required"},
		e.clock.Now()), http.StatusOK)
	l := e.licences(t)[0]
	wantEnd := licentia.FormatTime(trialEnd)
	if l.TrialEndsAt == nil || *l.TrialEndsAt != wantEnd || l.ExpiresAt == nil || *l.ExpiresAt != wantEnd {
		t.Errorf("trial_ends_at %v, expires_at %v; want both %s", l.TrialEndsAt, l.ExpiresAt, wantEnd)
	}
	if l.Provider.SubscriptionID == nil || *l.Provider.SubscriptionID != "sub_1" || *l.Provider.OrderID != "in_1" {
		t.Errorf("provider ids = %+v, want subscription sub_1, order in_1", l.Provider)
	}
	items := []providers.Item{{ProductID: "prod_pro", Quantity: 1}}
	e.deliver(t, providertest.StripeSubscriptionEvent("evt_conv", "customer.subscription.updated", "sub_1", "active", "trialing", items, e.clock.Now()), http.StatusOK)
	l = e.licences(t)[0]
	if l.TrialEndsAt != nil || l.ExpiresAt != nil || l.Status != licentia.StatusActive {
		t.Errorf("after conversion trial_ends_at %v, expires_at %v, status %s; want null, null, active", l.TrialEndsAt, l.ExpiresAt, l.Status)
	}
	e.deliver(t, providertest.StripeSubscriptionEvent("evt_end", "customer.subscription.deleted", "sub_1", "canceled", "", items, e.clock.Now()), http.StatusOK)
	l = e.licences(t)[0]
	if l.Status != licentia.StatusExpired || l.StatusReason == nil || *l.StatusReason != "provider:stripe:subscription_ended" {
		t.Errorf("after the end status %s, reason %v; want expired, provider:stripe:subscription_ended", l.Status, l.StatusReason)
	}
	want := []licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceTrialConverted, licentia.EventLicenceExpired}
	if diff := cmp.Diff(want, e.eventTypes(t)); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// TestProviderWebhookSubscriptionRefund: a subscription's licence carries
// the checkout's invoice as order_id, and the full refund of its first
// payment, whose charge names only the payment intent, revokes it. While
// Stripe does not answer which invoice the payment paid, the refund is
// answered 503 so Stripe sends it again.
func TestProviderWebhookSubscriptionRefund(t *testing.T) {
	e := newProviderEnv(t)
	e.shop.AddCheckout("cs_sub", providers.Item{ProductID: "prod_pro", Quantity: 1})
	e.shop.AddSubscription("sub_1", providertest.StripeSubscription{Status: "active"})
	e.shop.AddInvoicePayment("pi_sub_1", "in_1")
	e.deliver(t, providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_sub", SessionID: "cs_sub",
		Invoice: "in_1", Subscription: "sub_1", Customer: "cus_test_1", Email: buyerEmail}, e.clock.Now()), http.StatusOK)
	if l := e.licences(t)[0]; l.Status != licentia.StatusActive || *l.Provider.OrderID != "in_1" {
		t.Fatalf("licence status %s, order %s; want active, in_1", l.Status, *l.Provider.OrderID)
	}

	refund := providertest.StripeChargeRefundedEvent("evt_refund", "ch_1", "pi_sub_1", 4900, 4900, e.clock.Now())
	e.shop.SetOutcome(providertest.ServerError)
	e.run(t, scenario{call: stripeCall(e.integ, shopSecret, e.clock.Now(), refund),
		wantStatus: http.StatusServiceUnavailable, wantCode: licentia.CodeServiceUnavailable})
	if l := e.licences(t)[0]; l.Status != licentia.StatusActive {
		t.Fatalf("after an unanswered lookup status = %s, want active", l.Status)
	}
	e.shop.SetOutcome(providertest.OK)
	e.deliver(t, refund, http.StatusOK)
	l := e.licences(t)[0]
	if l.Status != licentia.StatusRevoked || l.StatusReason == nil || *l.StatusReason != "provider:stripe:refund" {
		t.Errorf("after a full refund status = %s, reason %v; want revoked, provider:stripe:refund", l.Status, l.StatusReason)
	}
	want := []licentia.EventType{licentia.EventLicenceIssued, licentia.EventLicenceRevoked}
	if diff := cmp.Diff(want, e.eventTypes(t)); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// TestProviderWebhookPaddleAndLemonSqueezy: a paid order of each issues
// its licence through the same route, signed as each provider signs, and
// the buyer finds it by order id.
func TestProviderWebhookPaddleAndLemonSqueezy(t *testing.T) {
	paddleKey := "pdl_sdbx_apikey_01httpshop0000000000000000_q6TGTJyvoIz7LDtXT65bX7_AQO"
	paddleFake := providertest.NewPaddle(t, paddleKey)
	paddleFake.AddProduct("pro_01httpdesk")
	paddleFake.AddCustomer("ctm_01buyer", buyerEmail)
	lemonKey := "ls_test_key_for_http_tests_only"
	lemonFake := providertest.NewLemonSqueezy(t, lemonKey)
	lemonFake.AddVariant("4242", false)
	for _, tt := range []struct {
		provider       providers.Name
		adapter        providers.Provider
		key, product   string
		order          string
		request        func(now time.Time) call
		wantLimitCount int64
	}{
		{providers.Paddle, paddle.New(paddleFake.URL(), providerTimeout), paddleKey, "pro_01httpdesk", "txn_01paid",
			func(now time.Time) call {
				body := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_01paid", TransactionID: "txn_01paid",
					CustomerID: "ctm_01buyer", Items: []providers.Item{{ProductID: "pro_01httpdesk", Quantity: 2}}}, now)
				return call{body: body, headers: map[string]string{"Paddle-Signature": providertest.PaddleSignature(body, shopSecret, now)}}
			}, 2},
		{providers.LemonSqueezy, lemonsqueezy.New(lemonFake.URL(), providerTimeout), lemonKey, "4242", "1001",
			func(time.Time) call {
				body := providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 1001, Identifier: "ord-1001",
					CustomerID: 7, Email: buyerEmail, VariantID: 4242, Quantity: 3, Total: 4900})
				return call{body: body, headers: map[string]string{"X-Event-Name": "order_created",
					"X-Signature": providertest.LemonSqueezySignature(body, shopSecret)}}
			}, 3},
	} {
		t.Run(string(tt.provider), func(t *testing.T) {
			e := &providerEnv{integrationEnv: &integrationEnv{testEnv: newTestEnvWith(t,
				envOptions{providers: map[providers.Name]providers.Provider{tt.provider: tt.adapter}})}}
			v, err := e.admin.ConnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID,
				admin.ConnectIntegration{Provider: string(tt.provider), Name: "Shop", APIKey: providers.Secret(tt.key), WebhookSecret: shopSecret})
			if err != nil {
				t.Fatalf("ConnectIntegration() error = %v", err)
			}
			e.integ = v.Integration.ID
			e.addProduct(t, e.org.ID, "desk-app", "DESK")
			e.key = e.testEnv.key(t, e.org.ID, licentia.ScopeProviderWrite)
			e.read = e.testEnv.key(t, e.org.ID, licentia.ScopeLicencesRead)
			e.run(t, scenario{call: call{method: "PUT", path: mappingPath(e.integ, tt.product), key: e.key,
				body: map[string]any{"product_id": "desk-app"}}, wantStatus: http.StatusOK})
			c := tt.request(e.clock.Now())
			c.method, c.path = "POST", webhookPath(e.integ)
			e.run(t, scenario{call: c, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
			e.run(t, scenario{call: c, wantStatus: http.StatusOK, wantBody: `{"received":true}`})
			ls := e.licences(t)
			if len(ls) != 1 || ls[0].LimitCount != tt.wantLimitCount || ls[0].Email != buyerEmail ||
				ls[0].Provider.OrderID == nil || *ls[0].Provider.OrderID != tt.order || ls[0].Source != licentia.SourceProvider {
				t.Fatalf("licences = %+v, want one of %d seats for order %s", ls, tt.wantLimitCount, tt.order)
			}
			e.run(t, scenario{call: lookupPost(map[string]any{"email": buyerEmail, "order_id": tt.order}, "198.51.100.8"), wantStatus: http.StatusOK})

			bad := c
			bad.headers = map[string]string{}
			for k, v := range c.headers {
				bad.headers[k] = v
			}
			for k := range bad.headers {
				if strings.Contains(k, "Signature") {
					bad.headers[k] = "0000"
				}
			}
			e.run(t, scenario{call: bad, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeWebhookSignatureInvalid})
		})
	}
}

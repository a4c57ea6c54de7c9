package providertest

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
	"time"

	stripeapi "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/licentia/licentia/internal/providers"
)

// Stripe is a loopback fake of the parts of Stripe's API the service calls:
// GET /v1/account, /v1/products/{id}, /v1/checkout/sessions/{id}/line_items,
// /v1/subscriptions/{id} and /v1/invoice_payments filtered by payment intent.
type Stripe struct {
	fake
	AccountID     string
	products      map[string]bool
	lineItems     map[string][]providers.Item
	subscriptions map[string]StripeSubscription
	invoices      map[string]string // payment intent -> the invoice it paid
}

// StripeSubscription is what the fake answers for a subscription.
type StripeSubscription struct {
	Status   string // trialing, active, canceled...
	TrialEnd time.Time
}

// NewStripe starts a fake that accepts key, for account acct_1Test.
func NewStripe(t testing.TB, key string) *Stripe {
	t.Helper()
	s := &Stripe{
		AccountID:     "acct_1Test",
		products:      map[string]bool{},
		lineItems:     map[string][]providers.Item{},
		subscriptions: map[string]StripeSubscription{},
		invoices:      map[string]string{},
	}
	s.key = key
	s.errorBody = func(status int) any {
		return map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": http.StatusText(status)}}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/account", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"id": s.AccountID, "object": "account"})
	})
	mux.HandleFunc("GET /v1/products/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if !s.has(func() bool { return s.products[id] }) {
			s.fail(w, http.StatusNotFound)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "product", "active": true})
	})
	mux.HandleFunc("GET /v1/checkout/sessions/{id}/line_items", s.serveLineItems)
	mux.HandleFunc("GET /v1/subscriptions/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		s.mu.Lock()
		sub, ok := s.subscriptions[id]
		s.mu.Unlock()
		if !ok {
			s.fail(w, http.StatusNotFound)
			return
		}
		body := map[string]any{"id": id, "object": "subscription", "status": sub.Status, "trial_end": nil}
		if !sub.TrialEnd.IsZero() {
			body["trial_end"] = sub.TrialEnd.Unix()
		}
		writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("GET /v1/invoice_payments", s.serveInvoicePayments)
	s.start(t, mux)
	return s
}

func (s *Stripe) has(f func() bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f()
}

// AddProduct makes the account sell a product (prod_...).
func (s *Stripe) AddProduct(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.products[id] = true
}

// AddCheckout gives a checkout session its line items.
func (s *Stripe) AddCheckout(sessionID string, items ...providers.Item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lineItems[sessionID] = items
}

// AddSubscription makes a subscription known.
func (s *Stripe) AddSubscription(id string, sub StripeSubscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subscriptions[id] = sub
}

// AddInvoicePayment records that paymentIntent paid invoice, as a
// subscription's payments do.
func (s *Stripe) AddInvoicePayment(paymentIntent, invoice string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.invoices[paymentIntent] = invoice
}

// serveInvoicePayments answers GET /v1/invoice_payments for the filter the
// service uses: payment[type]=payment_intent and payment[payment_intent],
// optionally status. Stripe requires payment[type] with any payment filter;
// a list of every invoice payment is not served.
func (s *Stripe) serveInvoicePayments(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pi := q.Get("payment[payment_intent]")
	if q.Get("payment[type]") != "payment_intent" || pi == "" {
		s.fail(w, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	invoice, ok := s.invoices[pi]
	s.mu.Unlock()
	data := []any{}
	if status := q.Get("status"); ok && (status == "" || status == "paid") {
		data = append(data, map[string]any{
			"id": "inpay_" + invoice, "object": "invoice_payment", "invoice": invoice, "is_default": true,
			"status": "paid", "amount_paid": 4900, "amount_requested": 4900, "currency": "eur", "livemode": false,
			"payment": map[string]any{"type": "payment_intent", "payment_intent": pi},
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "url": r.URL.Path, "has_more": false, "data": data,
	})
}

// serveLineItems answers a list page. Pages hold at most limit items and
// follow starting_after, as Stripe's do, so a client must page.
func (s *Stripe) serveLineItems(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	items, ok := s.lineItems[id]
	s.mu.Unlock()
	if !ok {
		s.fail(w, http.StatusNotFound)
		return
	}
	limit := 10
	fmt.Sscan(r.URL.Query().Get("limit"), &limit)
	start := 0
	if after := r.URL.Query().Get("starting_after"); after != "" {
		fmt.Sscanf(after, "li_%d", &start)
		start++
	}
	end := min(start+limit, len(items))
	data := []any{}
	for i := start; i < end; i++ {
		data = append(data, map[string]any{
			"id": fmt.Sprintf("li_%d", i), "object": "item", "quantity": items[i].Quantity,
			"price": map[string]any{"id": "price_" + items[i].ProductID, "object": "price", "product": items[i].ProductID},
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "url": r.URL.Path, "has_more": end < len(items), "data": data,
	})
}

// StripeSignature is the Stripe-Signature header Stripe sends for body
// signed under secret at at.
func StripeSignature(body []byte, secret string, at time.Time) string {
	return fmt.Sprintf("t=%d,v1=%s", at.Unix(), hex.EncodeToString(webhook.ComputeSignature(at, body, secret)))
}

// NewStripeRequest builds the POST Stripe sends to a webhook endpoint.
func NewStripeRequest(ctx context.Context, url, secret string, at time.Time, body []byte) (*http.Request, error) {
	return newRequest(ctx, url, body, map[string]string{
		"Content-Type":     "application/json; charset=utf-8",
		"User-Agent":       "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
		"Stripe-Signature": StripeSignature(body, secret, at),
	})
}

// StripeCheckout describes a checkout.session.completed event.
type StripeCheckout struct {
	EventID       string
	SessionID     string
	PaymentIntent string // one-time payments
	Invoice       string // subscriptions
	Subscription  string
	Customer      string
	Email         string
	PaymentStatus string // paid (default), no_payment_required (a trial), unpaid
	Type          string // default checkout.session.completed
}

// StripeCheckoutEvent is the body of a checkout.session.completed event (or
// of c.Type), its session shaped as Stripe's API version 2026-03-25 sends it.
func StripeCheckoutEvent(c StripeCheckout, created time.Time) []byte {
	mode, status := "payment", c.PaymentStatus
	if c.Subscription != "" {
		mode = "subscription"
	}
	if status == "" {
		status = "paid"
	}
	typ := c.Type
	if typ == "" {
		typ = "checkout.session.completed"
	}
	return stripeEvent(c.EventID, typ, created, map[string]any{
		"id": c.SessionID, "object": "checkout.session", "mode": mode, "status": "complete",
		"payment_status": status, "payment_intent": nullable(c.PaymentIntent), "invoice": nullable(c.Invoice),
		"subscription": nullable(c.Subscription), "customer": nullable(c.Customer),
		"customer_details": map[string]any{"email": c.Email}, "amount_total": 4900, "currency": "eur",
	}, nil)
}

// StripeChargeRefundedEvent is the body of a charge.refunded event.
func StripeChargeRefundedEvent(eventID, chargeID, paymentIntent string, amount, refunded int64, created time.Time) []byte {
	return stripeEvent(eventID, "charge.refunded", created, map[string]any{
		"id": chargeID, "object": "charge", "amount": amount, "amount_refunded": refunded,
		"refunded": amount == refunded, "payment_intent": nullable(paymentIntent), "customer": "cus_1Test",
		"currency": "eur",
	}, nil)
}

// StripeSubscriptionEvent is the body of a customer.subscription.* event;
// previousStatus, when set, fills previous_attributes as an update does.
func StripeSubscriptionEvent(eventID, typ, subscriptionID, status, previousStatus string, items []providers.Item, created time.Time) []byte {
	data := []any{}
	for i, it := range items {
		data = append(data, map[string]any{
			"id": fmt.Sprintf("si_%d", i), "object": "subscription_item", "quantity": it.Quantity,
			"price": map[string]any{"id": "price_" + it.ProductID, "object": "price", "product": it.ProductID},
		})
	}
	var prev map[string]any
	if previousStatus != "" {
		prev = map[string]any{"status": previousStatus}
	}
	return stripeEvent(eventID, typ, created, map[string]any{
		"id": subscriptionID, "object": "subscription", "status": status, "customer": "cus_1Test",
		"items": map[string]any{"object": "list", "data": data, "has_more": false},
	}, prev)
}

func stripeEvent(id, typ string, created time.Time, object, previous map[string]any) []byte {
	data := map[string]any{"object": object}
	if previous != nil {
		data["previous_attributes"] = previous
	}
	return mustJSON(map[string]any{
		"id": id, "object": "event", "api_version": stripeapi.APIVersion, "created": created.Unix(),
		"livemode": false, "pending_webhooks": 1, "type": typ, "data": data,
		"request": map[string]any{"id": nil, "idempotency_key": nil},
	})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

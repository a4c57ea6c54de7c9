package providertest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/providers"
)

// Paddle is a loopback fake of the parts of Paddle Billing's API the service
// calls: GET /event-types, /products/{id}, /customers/{id} and
// /subscriptions/{id}.
type Paddle struct {
	fake
	products      map[string]bool
	customers     map[string]string // id -> email
	subscriptions map[string]PaddleSubscription
}

// PaddleSubscription is what the fake answers for a subscription.
type PaddleSubscription struct {
	Status   string // trialing, active, canceled...
	TrialEnd time.Time
}

// NewPaddle starts a fake that accepts key.
func NewPaddle(t testing.TB, key string) *Paddle {
	t.Helper()
	p := &Paddle{products: map[string]bool{}, customers: map[string]string{}, subscriptions: map[string]PaddleSubscription{}}
	p.key = key
	codes := map[int]string{401: "authentication_malformed", 403: "forbidden", 404: "not_found", 500: "internal_error"}
	p.errorBody = func(status int) any {
		return map[string]any{
			"error": map[string]any{"type": "request_error", "code": codes[status], "detail": http.StatusText(status),
				"documentation_url": "https://developer.paddle.com/v1/errors/shared/" + codes[status]},
			"meta": map[string]any{"request_id": "00000000-0000-0000-0000-000000000000"},
		}
	}
	meta := map[string]any{"request_id": "00000000-0000-0000-0000-000000000000"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /event-types", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"data": []any{
			map[string]any{"name": "transaction.completed", "type": "transaction", "version": 1},
		}, "meta": meta})
	})
	mux.HandleFunc("GET /products/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		p.mu.Lock()
		ok := p.products[id]
		p.mu.Unlock()
		if !ok {
			p.fail(w, http.StatusNotFound)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"id": id, "name": "Product", "status": "active"}, "meta": meta})
	})
	mux.HandleFunc("GET /customers/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		p.mu.Lock()
		email, ok := p.customers[id]
		p.mu.Unlock()
		if !ok {
			p.fail(w, http.StatusNotFound)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"id": id, "email": rawString(email), "status": "active"}, "meta": meta})
	})
	mux.HandleFunc("GET /subscriptions/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		p.mu.Lock()
		sub, ok := p.subscriptions[id]
		p.mu.Unlock()
		if !ok {
			p.fail(w, http.StatusNotFound)
			return
		}
		var trialDates, next any
		if !sub.TrialEnd.IsZero() {
			end := sub.TrialEnd.UTC().Format(time.RFC3339Nano)
			trialDates = map[string]any{"starts_at": sub.TrialEnd.Add(-14 * 24 * time.Hour).UTC().Format(time.RFC3339Nano), "ends_at": end}
			next = end
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{
			"id": id, "status": sub.Status, "next_billed_at": next,
			"items": []any{map[string]any{"status": sub.Status, "quantity": 1, "trial_dates": trialDates}},
		}, "meta": meta})
	})
	p.start(t, mux)
	return p
}

// rawString is s as a JSON string that keeps bytes that are not UTF-8 as
// they are, as a broken answer would carry them; encoding/json would
// replace them.
func rawString(s string) any {
	if utf8.ValidString(s) {
		return s
	}
	return json.RawMessage(`"` + s + `"`)
}

// AddProduct makes the account sell a product (pro_...).
func (p *Paddle) AddProduct(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.products[id] = true
}

// AddCustomer makes a customer known, with an email.
func (p *Paddle) AddCustomer(id, email string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.customers[id] = email
}

// AddSubscription makes a subscription known.
func (p *Paddle) AddSubscription(id string, sub PaddleSubscription) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.subscriptions[id] = sub
}

// PaddleSignature is the Paddle-Signature header Paddle sends for body
// signed under secret at at: ts and the hex HMAC-SHA256 of "ts:body".
func PaddleSignature(body []byte, secret string, at time.Time) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + ":"))
	mac.Write(body)
	return fmt.Sprintf("ts=%s;h1=%s", ts, hex.EncodeToString(mac.Sum(nil)))
}

// NewPaddleRequest builds the POST Paddle sends to a notification
// destination.
func NewPaddleRequest(ctx context.Context, url, secret string, at time.Time, body []byte) (*http.Request, error) {
	return newRequest(ctx, url, body, map[string]string{
		"Content-Type":     "application/json",
		"Paddle-Signature": PaddleSignature(body, secret, at),
	})
}

// PaddleTransaction describes a transaction.completed event.
type PaddleTransaction struct {
	EventID       string
	TransactionID string
	// InvoiceNumber is the number on the buyer's invoice, which Paddle
	// gives a completed transaction; none when empty.
	InvoiceNumber  string
	Origin         string // web (default), api, subscription_recurring...
	CustomerID     string
	SubscriptionID string
	Items          []providers.Item
}

// PaddleTransactionEvent is the body of a transaction.completed event.
func PaddleTransactionEvent(t PaddleTransaction, occurred time.Time) []byte {
	if t.Origin == "" {
		t.Origin = "web"
	}
	items := []any{}
	for i, it := range t.Items {
		items = append(items, map[string]any{
			"price_id": fmt.Sprintf("pri_%d", i), "quantity": it.Quantity, "proration": nil,
			"price": map[string]any{"id": fmt.Sprintf("pri_%d", i), "product_id": it.ProductID, "status": "active"},
		})
	}
	return paddleEvent(t.EventID, "transaction.completed", occurred, map[string]any{
		"id": t.TransactionID, "status": "completed", "origin": t.Origin, "customer_id": nullable(t.CustomerID),
		"invoice_number":  nullable(t.InvoiceNumber),
		"subscription_id": nullable(t.SubscriptionID), "currency_code": "EUR", "collection_mode": "automatic",
		"items": items, "details": map[string]any{"totals": map[string]any{"total": "4900", "currency_code": "EUR"}},
	})
}

// PaddleAdjustmentEvent is the body of an adjustment.created or
// adjustment.updated event.
func PaddleAdjustmentEvent(eventID, typ, adjustmentID, action, adjustmentType, status, transactionID string, occurred time.Time) []byte {
	return paddleEvent(eventID, typ, occurred, map[string]any{
		"id": adjustmentID, "action": action, "type": adjustmentType, "status": status, "transaction_id": transactionID,
		"subscription_id": nil, "customer_id": "ctm_1", "reason": "requested by customer", "currency_code": "EUR",
		"totals": map[string]any{"total": "4900", "currency_code": "EUR"},
	})
}

// PaddleSubscriptionEvent is the body of a subscription.* event.
func PaddleSubscriptionEvent(eventID, typ, subscriptionID, status string, items []providers.Item, occurred time.Time) []byte {
	list := []any{}
	for i, it := range items {
		list = append(list, map[string]any{
			"status": status, "quantity": it.Quantity,
			"price": map[string]any{"id": fmt.Sprintf("pri_%d", i), "product_id": it.ProductID},
		})
	}
	return paddleEvent(eventID, typ, occurred, map[string]any{
		"id": subscriptionID, "status": status, "customer_id": "ctm_1", "items": list,
	})
}

func paddleEvent(id, typ string, occurred time.Time, data map[string]any) []byte {
	return mustJSON(map[string]any{
		"event_id": id, "event_type": typ, "occurred_at": occurred.UTC().Format(time.RFC3339Nano),
		"notification_id": "ntf_" + id, "data": data,
	})
}

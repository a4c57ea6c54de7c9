package providertest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// LemonSqueezy is a loopback fake of the parts of Lemon Squeezy's API the
// service calls: GET /v1/users/me, /v1/variants/{id} and
// /v1/subscriptions?filter[order_id]=.
type LemonSqueezy struct {
	fake
	UserID        string
	TestMode      bool
	variants      map[string]bool // id -> is_subscription
	subscriptions map[string]LemonSqueezySubscription
}

// LemonSqueezySubscription is a subscription the fake lists for an order.
type LemonSqueezySubscription struct {
	ID          string
	Status      string // on_trial, active, cancelled, expired...
	TrialEndsAt time.Time
}

// NewLemonSqueezy starts a fake that accepts key, a test-mode key of user 1.
func NewLemonSqueezy(t testing.TB, key string) *LemonSqueezy {
	t.Helper()
	l := &LemonSqueezy{UserID: "1", TestMode: true, variants: map[string]bool{}, subscriptions: map[string]LemonSqueezySubscription{}}
	l.key = key
	l.errorBody = func(status int) any {
		return map[string]any{
			"jsonapi": map[string]any{"version": "1.0"},
			"errors":  []any{map[string]any{"status": strconv.Itoa(status), "title": http.StatusText(status), "detail": http.StatusText(status)}},
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/users/me", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"meta": map[string]any{"test_mode": l.TestMode}, "jsonapi": map[string]any{"version": "1.0"},
			"data": map[string]any{"type": "users", "id": l.UserID, "attributes": map[string]any{"name": "Maker"}},
		})
	})
	mux.HandleFunc("GET /v1/variants/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		l.mu.Lock()
		sub, ok := l.variants[id]
		l.mu.Unlock()
		if !ok {
			l.fail(w, http.StatusNotFound)
			return
		}
		productID, _ := strconv.Atoi(id)
		writeJSON(w, http.StatusOK, map[string]any{
			"jsonapi": map[string]any{"version": "1.0"},
			"data": map[string]any{"type": "variants", "id": id, "attributes": map[string]any{
				"product_id": productID + 1000, "name": "Default", "is_subscription": sub, "status": "published",
			}},
		})
	})
	mux.HandleFunc("GET /v1/subscriptions", func(w http.ResponseWriter, r *http.Request) {
		orderID := r.URL.Query().Get("filter[order_id]")
		l.mu.Lock()
		sub, ok := l.subscriptions[orderID]
		l.mu.Unlock()
		data := []any{}
		if ok {
			var trialEnd any
			if !sub.TrialEndsAt.IsZero() {
				trialEnd = sub.TrialEndsAt.UTC().Format("2006-01-02T15:04:05.000000Z")
			}
			oid, _ := strconv.Atoi(orderID)
			data = append(data, map[string]any{"type": "subscriptions", "id": sub.ID, "attributes": map[string]any{
				"order_id": oid, "status": sub.Status, "trial_ends_at": trialEnd,
			}})
		}
		writeJSON(w, http.StatusOK, map[string]any{"jsonapi": map[string]any{"version": "1.0"}, "data": data})
	})
	l.start(t, mux)
	return l
}

// AddVariant makes the key's store sell a variant.
func (l *LemonSqueezy) AddVariant(id string, subscription bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.variants[id] = subscription
}

// AddSubscription lists a subscription for an order.
func (l *LemonSqueezy) AddSubscription(orderID string, sub LemonSqueezySubscription) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subscriptions[orderID] = sub
}

// LemonSqueezySignature is the X-Signature Lemon Squeezy sends: the hex
// HMAC-SHA256 of the body under the webhook's signing secret.
func LemonSqueezySignature(body []byte, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// NewLemonSqueezyRequest builds the POST Lemon Squeezy sends to a webhook
// endpoint for event.
func NewLemonSqueezyRequest(ctx context.Context, url, secret, event string, body []byte) (*http.Request, error) {
	return newRequest(ctx, url, body, map[string]string{
		"Content-Type": "application/json",
		"X-Event-Name": event,
		"X-Signature":  LemonSqueezySignature(body, secret),
	})
}

// LemonSqueezyOrder describes an order_created or order_refunded event.
type LemonSqueezyOrder struct {
	Event   string // order_created (default) or order_refunded
	OrderID int
	// OrderNumber is the store's number of the order, shown on the
	// receipt; OrderID when not given.
	OrderNumber    int
	Identifier     string
	CustomerID     int
	Email          string
	Status         string // paid (default), pending, refunded, partial_refund
	VariantID      int
	Quantity       int
	Total          int
	RefundedAmount int
	RefundedAt     time.Time
}

// LemonSqueezyOrderEvent is the body of an order event, its order shaped as
// Lemon Squeezy's order object.
func LemonSqueezyOrderEvent(o LemonSqueezyOrder) []byte {
	if o.Event == "" {
		o.Event = "order_created"
	}
	if o.Status == "" {
		o.Status = "paid"
	}
	var refundedAt any
	if !o.RefundedAt.IsZero() {
		refundedAt = o.RefundedAt.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	if o.OrderNumber == 0 {
		o.OrderNumber = o.OrderID
	}
	id := strconv.Itoa(o.OrderID)
	return mustJSON(map[string]any{
		"meta": map[string]any{"event_name": o.Event, "test_mode": true, "webhook_id": "6e5d5a2c-0a41-4b1e-9d6e-3f1c5b2a9d10"},
		"data": map[string]any{"type": "orders", "id": id, "attributes": map[string]any{
			"store_id": 1, "customer_id": o.CustomerID, "identifier": o.Identifier, "order_number": o.OrderNumber,
			"user_name": "Buyer", "user_email": o.Email, "currency": "EUR", "total": o.Total, "status": o.Status,
			"refunded": o.Status == "refunded", "refunded_at": refundedAt, "refunded_amount": o.RefundedAmount,
			"first_order_item": map[string]any{
				"id": o.OrderID * 10, "order_id": o.OrderID, "product_id": o.VariantID + 1000, "variant_id": o.VariantID,
				"quantity": o.Quantity, "price": o.Total,
			},
			"created_at": "2026-11-26T12:00:00.000000Z", "updated_at": "2026-11-26T12:00:00.000000Z", "test_mode": true,
		}},
	})
}

// LemonSqueezySubscriptionEvent is the body of a subscription_* event.
func LemonSqueezySubscriptionEvent(event string, subscriptionID, orderID, variantID int, status string, updatedAt time.Time) []byte {
	return mustJSON(map[string]any{
		"meta": map[string]any{"event_name": event, "test_mode": true},
		"data": map[string]any{"type": "subscriptions", "id": strconv.Itoa(subscriptionID), "attributes": map[string]any{
			"store_id": 1, "customer_id": 7, "order_id": orderID, "order_item_id": orderID * 10, "product_id": variantID + 1000,
			"variant_id": variantID, "user_name": "Buyer", "user_email": "buyer@example.com", "status": status,
			"cancelled": status == "cancelled", "trial_ends_at": nil,
			"first_subscription_item": map[string]any{"id": 1, "subscription_id": subscriptionID, "price_id": 1, "quantity": 1},
			"updated_at":              updatedAt.UTC().Format("2006-01-02T15:04:05.000000Z"), "test_mode": true,
		}},
	})
}

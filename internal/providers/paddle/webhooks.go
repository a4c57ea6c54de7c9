package paddle

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/providers"
)

// SignatureHeader is the header Paddle signs webhooks in.
const SignatureHeader = "Paddle-Signature"

// Verify checks Paddle-Signature ("ts=...;h1=..."), the hex HMAC-SHA256 of
// "ts:body" under the notification destination's secret, with ts within
// providers.SignatureTolerance of now. While a secret is rotated Paddle
// sends one h1 per secret; any may match.
func (c *Client) Verify(header http.Header, body []byte, secret string, now time.Time) error {
	ts, sigs, ok := parseSignature(header.Get(SignatureHeader))
	if !ok || secret == "" {
		return providers.ErrSignatureInvalid
	}
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(n, 0)).Abs() > providers.SignatureTolerance {
		return providers.ErrSignatureInvalid
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + ":"))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		if got, err := hex.DecodeString(s); err == nil && hmac.Equal(want, got) {
			return nil
		}
	}
	return providers.ErrSignatureInvalid
}

func parseSignature(h string) (ts string, sigs []string, ok bool) {
	for part := range strings.SplitSeq(h, ";") {
		k, v, found := strings.Cut(part, "=")
		if !found {
			return "", nil, false
		}
		switch k {
		case "ts":
			ts = v
		case "h1":
			sigs = append(sigs, v)
		}
	}
	return ts, sigs, ts != "" && len(sigs) > 0
}

// envelope is a Paddle notification: the event's id and type, and the
// entity in data.
type envelope struct {
	EventID   string          `json:"event_id"`
	EventType string          `json:"event_type"`
	Data      json.RawMessage `json:"data"`
}

type item struct {
	Price *struct {
		ProductID string `json:"product_id"`
	} `json:"price"`
	Quantity int64 `json:"quantity"`
}

func items(in []item) []providers.Item {
	var out []providers.Item
	for _, it := range in {
		if it.Price != nil && it.Price.ProductID != "" {
			out = append(out, providers.Item{ProductID: it.Price.ProductID, Quantity: max(it.Quantity, 1)})
		}
	}
	return out
}

// Parse reads a Paddle event.
func (c *Client) Parse(ctx context.Context, body []byte, apiKey string) (*providers.Event, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil || env.EventID == "" || env.EventType == "" {
		return nil, providers.ErrEventMalformed
	}
	ev := &providers.Event{ID: env.EventID, Type: env.EventType, Kind: providers.KindIgnored}
	var err error
	switch env.EventType {
	case "transaction.completed":
		err = c.transaction(ctx, env.Data, apiKey, ev)
	case "adjustment.created", "adjustment.updated":
		err = adjustment(env.Data, ev)
	case "subscription.canceled", "subscription.activated":
		err = subscriptionChanged(env.EventType, env.Data, ev)
	}
	if err != nil {
		return nil, fmt.Errorf("paddle %s: %w", env.EventType, err)
	}
	return ev, nil
}

// newOrder lists the transaction origins that are a purchase: a checkout
// (web) or a transaction made through the API. Renewals
// (subscription_recurring) and changes to a subscription complete
// transactions too, and must not issue licences again.
var newOrder = map[string]bool{"web": true, "api": true}

// transaction reads a completed transaction. The customer's email is not in
// it (GET /customers/{id}); a subscription's trial end is on the
// subscription (GET /subscriptions/{id}).
func (c *Client) transaction(ctx context.Context, raw json.RawMessage, apiKey string, ev *providers.Event) error {
	var t struct {
		ID             string `json:"id"`
		Origin         string `json:"origin"`
		InvoiceNumber  string `json:"invoice_number"`
		CustomerID     string `json:"customer_id"`
		SubscriptionID string `json:"subscription_id"`
		Items          []item `json:"items"`
	}
	if err := json.Unmarshal(raw, &t); err != nil || t.ID == "" {
		return providers.ErrEventMalformed
	}
	if !newOrder[t.Origin] {
		return nil
	}
	ev.Kind = providers.KindOrderPaid
	ev.OrderID = t.ID
	// The invoice a buyer receives carries its number, not the
	// transaction's id.
	ev.OrderNumber = t.InvoiceNumber
	ev.CustomerID = t.CustomerID
	ev.SubscriptionID = t.SubscriptionID
	ev.Subscription = t.SubscriptionID != ""
	ev.Items = items(t.Items)
	api := c.api(apiKey)
	if t.CustomerID != "" {
		var cust struct {
			Data struct {
				Email string `json:"email"`
			} `json:"data"`
		}
		if err := api.Get(ctx, apiKey, "/customers/"+url.PathEscape(t.CustomerID), nil, &cust); err != nil {
			return fmt.Errorf("customer: %w", unavailable(err))
		}
		ev.Email = cust.Data.Email
	}
	if !ev.Subscription {
		return nil
	}
	var sub struct {
		Data struct {
			Status       string     `json:"status"`
			NextBilledAt *time.Time `json:"next_billed_at"`
			Items        []struct {
				TrialDates *struct {
					EndsAt *time.Time `json:"ends_at"`
				} `json:"trial_dates"`
			} `json:"items"`
		} `json:"data"`
	}
	if err := api.Get(ctx, apiKey, "/subscriptions/"+url.PathEscape(t.SubscriptionID), nil, &sub); err != nil {
		return fmt.Errorf("subscription: %w", unavailable(err))
	}
	if sub.Data.Status != "trialing" {
		return nil
	}
	// A trial's end is on its items; the next billing is the same moment
	// and stands in when an item carries no dates.
	end := sub.Data.NextBilledAt
	for _, it := range sub.Data.Items {
		if it.TrialDates != nil && it.TrialDates.EndsAt != nil {
			end = it.TrialDates.EndsAt
			break
		}
	}
	if end != nil {
		e := end.UTC()
		ev.TrialEndsAt = &e
	}
	return nil
}

// unavailable makes any failure of a call an event needs ErrUnavailable,
// keeping the cause wrapped.
func unavailable(err error) error {
	if errors.Is(err, providers.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", providers.ErrUnavailable, err)
}

// adjustment reads a refund. Most refunds wait for Paddle's approval
// (status pending_approval, then adjustment.updated approved or rejected),
// so only an approved refund is reported; it is full when its type is full
// (the transaction's grand total). Credits and chargebacks are ignored.
func adjustment(raw json.RawMessage, ev *providers.Event) error {
	var a struct {
		ID             string `json:"id"`
		Action         string `json:"action"`
		Type           string `json:"type"`
		Status         string `json:"status"`
		TransactionID  string `json:"transaction_id"`
		SubscriptionID string `json:"subscription_id"`
		CustomerID     string `json:"customer_id"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.ID == "" {
		return providers.ErrEventMalformed
	}
	if a.Action != "refund" || a.Status != "approved" {
		return nil
	}
	ev.Kind = providers.KindRefunded
	ev.OrderID = a.TransactionID
	ev.SubscriptionID = a.SubscriptionID
	ev.CustomerID = a.CustomerID
	ev.FullRefund = a.Type == "full"
	return nil
}

// subscriptionChanged reads subscription.canceled (Paddle sends it when the
// subscription has ended, not when an end is scheduled) and
// subscription.activated (a subscription becoming active: its trial, if it
// had one, is over and paid; converting changes only licences still in
// their trial).
func subscriptionChanged(typ string, raw json.RawMessage, ev *providers.Event) error {
	var s struct {
		ID            string `json:"id"`
		Status        string `json:"status"`
		CustomerID    string `json:"customer_id"`
		TransactionID string `json:"transaction_id"`
		Items         []item `json:"items"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.ID == "" {
		return providers.ErrEventMalformed
	}
	ev.Subscription = true
	ev.SubscriptionID = s.ID
	ev.CustomerID = s.CustomerID
	ev.OrderID = s.TransactionID
	ev.Items = items(s.Items)
	switch {
	case typ == "subscription.canceled":
		ev.Kind = providers.KindSubscriptionEnded
	case s.Status == "active":
		ev.Kind = providers.KindTrialConverted
	}
	return nil
}

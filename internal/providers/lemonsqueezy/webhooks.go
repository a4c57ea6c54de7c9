package lemonsqueezy

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
	"time"

	"github.com/licentia/licentia/internal/providers"
)

// SignatureHeader is the header Lemon Squeezy signs webhooks in.
const SignatureHeader = "X-Signature"

// Verify checks X-Signature, the hex HMAC-SHA256 of the body under secret.
// Lemon Squeezy signs no timestamp, so now is unused: a replayed request is
// recognised by its event id instead.
func (c *Client) Verify(header http.Header, body []byte, secret string, now time.Time) error {
	got, err := hex.DecodeString(header.Get(SignatureHeader))
	if err != nil || len(got) != sha256.Size || secret == "" {
		return providers.ErrSignatureInvalid
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), got) {
		return providers.ErrSignatureInvalid
	}
	return nil
}

// envelope is a webhook body: the event's name in meta, the order or
// subscription as a JSON:API resource in data.
type envelope struct {
	Meta struct {
		EventName string `json:"event_name"`
	} `json:"meta"`
	Data struct {
		Type       string          `json:"type"`
		ID         string          `json:"id"`
		Attributes json.RawMessage `json:"attributes"`
	} `json:"data"`
}

type order struct {
	Status         string `json:"status"`
	Identifier     string `json:"identifier"`
	OrderNumber    int64  `json:"order_number"`
	CustomerID     int64  `json:"customer_id"`
	UserEmail      string `json:"user_email"`
	Total          int64  `json:"total"`
	RefundedAmount int64  `json:"refunded_amount"`
	RefundedAt     string `json:"refunded_at"`
	FirstOrderItem *struct {
		VariantID int64 `json:"variant_id"`
		Quantity  int64 `json:"quantity"`
	} `json:"first_order_item"`
}

type subscription struct {
	OrderID               int64      `json:"order_id"`
	CustomerID            int64      `json:"customer_id"`
	VariantID             int64      `json:"variant_id"`
	UserEmail             string     `json:"user_email"`
	Status                string     `json:"status"`
	TrialEndsAt           *time.Time `json:"trial_ends_at"`
	UpdatedAt             string     `json:"updated_at"`
	FirstSubscriptionItem *struct {
		Quantity int64 `json:"quantity"`
	} `json:"first_subscription_item"`
}

// Parse reads a Lemon Squeezy event. Lemon Squeezy gives its events no id,
// so the event id is made of what identifies one: the event's name, the
// resource's id and, for events that recur on one resource, when it
// changed. A resent event gets the same id.
func (c *Client) Parse(ctx context.Context, body []byte, apiKey string) (*providers.Event, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil || env.Meta.EventName == "" || env.Data.ID == "" {
		return nil, providers.ErrEventMalformed
	}
	name := env.Meta.EventName
	ev := &providers.Event{ID: name + ":" + env.Data.ID, Type: name, Kind: providers.KindIgnored}
	var err error
	switch name {
	case "order_created":
		err = c.orderCreated(ctx, env.Data.ID, env.Data.Attributes, apiKey, ev)
	case "order_refunded":
		err = orderRefunded(env.Data.ID, env.Data.Attributes, ev)
	case "subscription_expired", "subscription_updated":
		err = subscriptionChanged(name, env.Data.ID, env.Data.Attributes, ev)
	}
	if err != nil {
		return nil, fmt.Errorf("lemonsqueezy %s: %w", name, err)
	}
	return ev, nil
}

// orderCreated reads a paid order: its one item (Lemon Squeezy checkouts
// sell one variant) and the buyer. Whether it starts a subscription is the
// variant's is_subscription, and the subscription (its id, its trial) is
// found by the order's id; both need a call. A subscription not yet listed
// is ErrUnavailable: Lemon Squeezy sends the event again.
func (c *Client) orderCreated(ctx context.Context, id string, raw json.RawMessage, apiKey string, ev *providers.Event) error {
	var o order
	if err := json.Unmarshal(raw, &o); err != nil || o.FirstOrderItem == nil {
		return providers.ErrEventMalformed
	}
	if o.Status != "paid" {
		return nil
	}
	ev.Kind = providers.KindOrderPaid
	ev.OrderID = id
	// The receipt shows the store's order number, not the order's id: a
	// buyer looking up the purchase has that.
	ev.OrderNumber = ids(o.OrderNumber)
	ev.CheckoutID = o.Identifier
	ev.CustomerID = ids(o.CustomerID)
	ev.Email = o.UserEmail
	variantID := ids(o.FirstOrderItem.VariantID)
	ev.Items = []providers.Item{{ProductID: variantID, Quantity: max(o.FirstOrderItem.Quantity, 1)}}
	v, err := c.variant(ctx, apiKey, variantID, nil)
	if err != nil {
		return fmt.Errorf("variant: %w", unavailable(err))
	}
	if !v.IsSubscription {
		return nil
	}
	var list struct {
		Data []struct {
			ID         string       `json:"id"`
			Attributes subscription `json:"attributes"`
		} `json:"data"`
	}
	path := "/v1/subscriptions?filter%5Border_id%5D=" + url.QueryEscape(id)
	if err := c.api.Get(ctx, apiKey, path, nil, &list); err != nil {
		return fmt.Errorf("subscriptions: %w", unavailable(err))
	}
	if len(list.Data) == 0 {
		return fmt.Errorf("subscriptions: %w: none yet for the order", providers.ErrUnavailable)
	}
	sub := list.Data[0]
	ev.Subscription = true
	ev.SubscriptionID = sub.ID
	if sub.Attributes.Status == "on_trial" && sub.Attributes.TrialEndsAt != nil {
		end := sub.Attributes.TrialEndsAt.UTC()
		ev.TrialEndsAt = &end
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

// orderRefunded reads a refund: full when the refunded amount reaches the
// order's total. Each refund of one order is a separate event.
func orderRefunded(id string, raw json.RawMessage, ev *providers.Event) error {
	var o order
	if err := json.Unmarshal(raw, &o); err != nil {
		return providers.ErrEventMalformed
	}
	ev.ID += ":" + o.RefundedAt
	ev.Kind = providers.KindRefunded
	ev.OrderID = id
	ev.CheckoutID = o.Identifier
	ev.CustomerID = ids(o.CustomerID)
	ev.FullRefund = o.Total > 0 && o.RefundedAmount == o.Total
	return nil
}

// subscriptionChanged reads subscription_expired (the subscription has
// ended: subscription_cancelled only announces an end at the period's
// close, and can be resumed) and subscription_updated. Lemon Squeezy sends
// no previous state, so an update to active is reported as a trial's
// conversion; converting changes only licences still in their trial.
func subscriptionChanged(name, id string, raw json.RawMessage, ev *providers.Event) error {
	var s subscription
	if err := json.Unmarshal(raw, &s); err != nil {
		return providers.ErrEventMalformed
	}
	ev.ID += ":" + s.UpdatedAt
	ev.Subscription = true
	ev.SubscriptionID = id
	ev.OrderID = ids(s.OrderID)
	ev.CustomerID = ids(s.CustomerID)
	ev.Email = s.UserEmail
	quantity := int64(1)
	if s.FirstSubscriptionItem != nil {
		quantity = max(s.FirstSubscriptionItem.Quantity, 1)
	}
	if s.VariantID != 0 {
		ev.Items = []providers.Item{{ProductID: ids(s.VariantID), Quantity: quantity}}
	}
	switch {
	case name == "subscription_expired":
		ev.Kind = providers.KindSubscriptionEnded
	case s.Status == "active":
		ev.Kind = providers.KindTrialConverted
	}
	return nil
}

// ids writes a Lemon Squeezy numeric id as the string the service stores;
// zero (absent) is empty.
func ids(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

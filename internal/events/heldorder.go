package events

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// HeldOrder is a held order as the API shows it, in answers and in the
// data of order.held. Email is the buyer's as the provider sent it, null
// when it was not readable text.
type HeldOrder struct {
	ID            string              `json:"id"`
	IntegrationID string              `json:"integration_id"`
	Provider      string              `json:"provider"`
	OrderID       *string             `json:"order_id"`
	CheckoutID    *string             `json:"checkout_id"`
	Email         *string             `json:"email"`
	Reason        licentia.HeldReason `json:"reason"`
	Items         []licentia.HeldItem `json:"items"`
	CreatedAt     string              `json:"created_at"`
}

// HeldOrderOf shows h.
func HeldOrderOf(h *licentia.HeldOrder) HeldOrder {
	items := h.Items
	if items == nil {
		items = []licentia.HeldItem{}
	}
	return HeldOrder{ID: h.ID, IntegrationID: h.IntegrationID, Provider: h.Provider, OrderID: h.OrderID,
		CheckoutID: h.CheckoutID, Email: h.Email, Reason: h.Reason, Items: items, CreatedAt: licentia.FormatTime(h.CreatedAt)}
}

// orderBody is the webhook body of an event about an order rather than a
// licence.
type orderBody struct {
	Type      licentia.EventType `json:"type"`
	Timestamp string             `json:"timestamp"`
	Data      struct {
		HeldOrder HeldOrder `json:"held_order"`
	} `json:"data"`
}

// WriteOrderHeld records order.held in tx: data.held_order is h as the
// API shows it. The event is about no licence: none was issued.
func WriteOrderHeld(ctx context.Context, tx store.Tx, at time.Time, h *licentia.HeldOrder) (*licentia.Event, error) {
	b := orderBody{Type: licentia.EventOrderHeld, Timestamp: licentia.FormatTime(at)}
	b.Data.HeldOrder = HeldOrderOf(h)
	return write(ctx, tx, h.OrgID, nil, b.Type, at, b)
}

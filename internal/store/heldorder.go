package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// HeldOrderReader reads held orders.
type HeldOrderReader interface {
	// HeldOrders lists an organization's orders still held, oldest first
	// (id breaking ties).
	HeldOrders(ctx context.Context, orgID string) ([]licentia.HeldOrder, error)
	// CountHeldOrders counts an organization's orders still held.
	CountHeldOrders(ctx context.Context, orgID string) (int64, error)
	// HeldOrder reads one order still held; a released or dropped one, or
	// another organization's, answers not_found like a missing one.
	HeldOrder(ctx context.Context, orgID, id string) (*licentia.HeldOrder, error)
}

// HeldOrderWriter keeps and settles held orders.
type HeldOrderWriter interface {
	// CreateHeldOrder keeps h and reports whether it did: an order its
	// integration holds already (released or dropped too), by its order
	// key, is not kept twice and answers false.
	CreateHeldOrder(ctx context.Context, h *licentia.HeldOrder) (bool, error)
	// SettleHeldOrder moves an order still held to status (released or
	// dropped) at at, erasing its raw body, and reports whether it did:
	// false when it was settled meanwhile, by this transaction or a
	// committed one. A missing order, or another organization's, answers
	// false too.
	SettleHeldOrder(ctx context.Context, orgID, id string, status licentia.HeldStatus, at time.Time) (bool, error)
}

// HeldItemsJSON is how both engines store a held order's items: a JSON
// array, never null.
func HeldItemsJSON(items []licentia.HeldItem) (string, error) {
	if items == nil {
		items = []licentia.HeldItem{}
	}
	b, err := json.Marshal(items)
	return string(b), err
}

// ParseHeldItems reads what HeldItemsJSON wrote.
func ParseHeldItems(s string) ([]licentia.HeldItem, error) {
	items := []licentia.HeldItem{}
	if err := json.Unmarshal([]byte(s), &items); err != nil {
		return nil, fmt.Errorf("read held order items: %w", err)
	}
	return items, nil
}

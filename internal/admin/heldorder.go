package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/store"
)

// A paid order that cannot be issued as it stands (its email fails the
// email rule, a limit × quantity is over the maximum, a string in the event
// is not valid UTF-8, an add-on has no licence to add to) is answered 200,
// so the provider stops sending it, and kept as a held order in the
// transaction that records the provider's event, until a maker releases it
// with corrections or drops it.

// ListHeldOrders lists the organization's orders still held, oldest first.
func (s *Service) ListHeldOrders(ctx context.Context, orgID string) ([]licentia.HeldOrder, error) {
	hs, err := s.store.HeldOrders(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list held orders: %w", err)
	}
	return hs, nil
}

// CountHeldOrders counts the organization's orders still held, for the
// console's overview.
func (s *Service) CountHeldOrders(ctx context.Context, orgID string) (int64, error) {
	n, err := s.store.CountHeldOrders(ctx, orgID)
	if err != nil {
		return 0, fmt.Errorf("count held orders: %w", err)
	}
	return n, nil
}

// holdReason says why the paid order o cannot be issued as it stands, or
// false when it can, or when what is wrong with it is not something a
// maker can correct (an order id of 300 characters): that order is
// refused 400 as before. textInvalid is set when the event, or an answer
// of the provider's API it needed, held text that is not valid UTF-8.
func holdReason(o *ProviderOrder, textInvalid bool) (licentia.HeldReason, bool) {
	if textInvalid {
		return licentia.HeldTextInvalid, true
	}
	is := o.Validate()
	// More items than an order may have is no limit a release corrects.
	if len(is) == 0 || len(o.Items) > maxProviderItems {
		return "", false
	}
	var email, limit bool
	for _, i := range is {
		switch {
		case i.Path == "/email":
			email = true
		case i.Path == "/items" || strings.HasPrefix(i.Path, "/items/") && strings.HasSuffix(i.Path, "/quantity"):
			limit = true
		default:
			return "", false
		}
	}
	// An order with both faults names the email: a release corrects both.
	if email {
		return licentia.HeldEmailInvalid, true
	}
	return licentia.HeldLimitTooLarge, limit
}

// unreadable reports whether s, read from an event that held invalid
// text, may hold a replacement of it: decoding turned each invalid
// sequence into U+FFFD, so such a string is not stored. A string the
// provider sent with U+FFFD itself is treated alike. NUL, which
// PostgreSQL's text refuses, is not stored either.
func unreadable(s string) bool {
	return strings.ContainsRune(s, utf8.RuneError) || strings.ContainsRune(s, 0)
}

// readable is v, or nil when v is nil or unreadable.
func readable(v *string) *string {
	if v == nil || unreadable(*v) {
		return nil
	}
	return v
}

// heldOrderOf is the held order of the paid order o, brought by event ev,
// for reason; ok is false when the order cannot be named (its order key
// unreadable), and so cannot be held. Only text the service can store as
// sent is kept: an unreadable field is nil, an item whose product id is
// unreadable is left out, and for text_invalid the raw body keeps the
// event byte for byte.
func heldOrderOf(o *ProviderOrder, ev *providers.Event, reason licentia.HeldReason, body []byte) (*licentia.HeldOrder, bool) {
	key := o.orderKey()
	if key == "" || unreadable(key) || unreadable(o.EventID) {
		return nil, false
	}
	mapped := map[string]string{}
	for _, it := range o.Items {
		mapped[it.ProviderProductID] = it.ProductID
	}
	h := &licentia.HeldOrder{ID: licentia.NewID(), OrgID: o.OrgID, IntegrationID: o.IntegrationID, Provider: string(o.Provider),
		EventID: o.EventID, OrderKey: key, OrderID: readable(o.OrderID), CheckoutID: readable(o.CheckoutID),
		OrderNumber: readable(o.OrderNumber), CustomerID: readable(o.CustomerID), SubscriptionID: readable(o.SubscriptionID),
		Email: readable(&o.Email), Subscription: o.Subscription, TrialEndsAt: o.TrialEndsAt, Reason: reason,
		Items: []licentia.HeldItem{}, Status: licentia.HeldPending}
	for _, it := range ev.Items {
		if unreadable(it.ProductID) {
			continue
		}
		hi := licentia.HeldItem{ProviderProductID: it.ProductID, Quantity: it.Quantity}
		if p, ok := mapped[it.ProductID]; ok {
			hi.ProductID = &p
		}
		h.Items = append(h.Items, hi)
	}
	if reason == licentia.HeldTextInvalid {
		h.RawBody = body
	}
	return h, true
}

// holdOrderTx keeps h in tx, the provider event's transaction, with its
// audit entry and the order.held event, and reports whether it did: an
// order held before (by its order key) is not held twice. It is where
// every path that cannot issue a paid order ends, an add-on with no
// licence to add to included (holdAddOnsTx).
func (s *Service) holdOrderTx(ctx context.Context, tx store.Tx, h *licentia.HeldOrder) (bool, error) {
	h.CreatedAt = s.now()
	created, err := tx.CreateHeldOrder(ctx, h)
	if err != nil || !created {
		return false, err
	}
	e := licentia.AuditEntry{OrgID: h.OrgID, Action: licentia.AuditOrderHeld, Actor: providerActor(h.IntegrationID), At: h.CreatedAt}
	data := map[string]any{"held_order_id": h.ID, "integration_id": h.IntegrationID, "reason": h.Reason,
		"order_id": h.OrderID, "checkout_id": h.CheckoutID, "provider_event_id": h.EventID}
	if err := events.Audit(ctx, tx, e, data); err != nil {
		return false, err
	}
	_, err = events.WriteOrderHeld(ctx, tx, h.CreatedAt, h)
	return err == nil, err
}

// holdAddOnsTx holds the add-on items unplaced of the paid order o, which
// found no licence to add to, in tx, the provider event's transaction
// (reason no_licence_to_add_to). The order's other items took effect;
// the held order lists only what is left to do, and its release adds
// exactly that.
func (s *Service) holdAddOnsTx(ctx context.Context, tx store.Tx, o *ProviderOrder, ev *providers.Event, unplaced []ProviderItem) (bool, error) {
	h, ok := heldOrderOf(o, ev, licentia.HeldNoLicenceToAddTo, nil)
	if !ok {
		return false, errTextInvalid()
	}
	h.Items = slices.DeleteFunc(h.Items, func(hi licentia.HeldItem) bool {
		return !slices.ContainsFunc(unplaced, func(it ProviderItem) bool { return it.ProviderProductID == hi.ProviderProductID })
	})
	return s.holdOrderTx(ctx, tx, h)
}

package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/store"
)

// HeldRelease is the body of a held order's release: the corrections, each
// optional (an empty body or {} releases the order as it is held). Email
// replaces the buyer's; LimitCount is the limit of each licence the order
// issues, in place of its mapping's limit × the quantity bought;
// AddsToLicenceID names the licence an add-on order adds to.
type HeldRelease struct {
	licentia.Decoded
	Email           *string `json:"email"`
	LimitCount      *int64  `json:"limit_count" input:"min=1,max=4294967295"`
	AddsToLicenceID *string `json:"adds_to_licence_id"`
}

// Validate reports every problem of a release's corrections taken alone.
func (in *HeldRelease) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	is.CheckString("/email", in.Email, licentia.CheckEmail)
	if in.AddsToLicenceID != nil {
		if _, ok := licentia.ParseUUID(*in.AddsToLicenceID); !ok {
			is.Add("/adds_to_licence_id", "must be a licence id")
		}
	}
	return is
}

// errHeldSettled answers a release or drop that lost its race: the order
// was held when the request began, and another release or drop settled it
// meanwhile. Later requests find no such held order (404).
func errHeldSettled() error {
	return licentia.Errorf(licentia.CodeConflict, "The held order was released or dropped meanwhile.")
}

// ReleaseHeldOrder issues a held order with the corrections in, exactly as
// its provider event would have (licences, provider ids, key mail per each
// mapping's send_key_mail, events and audit entries with the provider as
// actor; the mappings as they are now), and returns the licences issued.
// The release itself is audited with actor. The order is settled in the
// issue's transaction by a conditional update, so of two releases at once
// exactly one issues; the other answers 409 conflict. Order of checks: 400
// corrections; 404 not_found (a released, dropped, missing or another
// organization's order); 409 conflict (settled meanwhile, or no item of
// the order is mapped now); 400 validation_failed at the correction's
// field when the order still cannot be issued, and it stays held.
func (s *Service) ReleaseHeldOrder(ctx context.Context, actor licentia.Actor, orgID, id string, in HeldRelease) ([]licentia.Licence, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	// Read before the transaction, so a release that finds the order held
	// and then loses it to another tells a race (409) from an order gone.
	h, err := s.store.HeldOrder(ctx, orgID, id)
	if err != nil {
		return nil, fmt.Errorf("release held order %s: %w", id, err)
	}
	if in.AddsToLicenceID != nil && h.Reason != licentia.HeldNoLicenceToAddTo {
		var is licentia.Issues
		is.Add("/adds_to_licence_id", "is only for an add-on order with no licence to add to")
		return nil, is.Err()
	}
	var out []licentia.Licence
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		out = nil // a run again starts afresh (see store.Store.InTx)
		// The organization's lock comes first (docs/design.md, "Lock order").
		if _, err := lockOrganization(ctx, tx, orgID); err != nil {
			return err
		}
		now := s.now()
		settled, err := tx.SettleHeldOrder(ctx, orgID, id, licentia.HeldReleased, now)
		if err != nil {
			return err
		}
		if !settled {
			return errHeldSettled()
		}
		out, err = s.releaseOrderTx(ctx, tx, h, in)
		if err != nil {
			return err
		}
		ids := make([]string, len(out))
		for i := range out {
			ids[i] = out[i].ID
		}
		e := licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditOrderReleased, Actor: actor, At: now}
		return events.Audit(ctx, tx, e, map[string]any{"held_order_id": h.ID, "integration_id": h.IntegrationID,
			"reason": h.Reason, "licence_ids": ids, "corrected": corrected(in)})
	})
	if err != nil {
		return nil, fmt.Errorf("release held order %s: %w", id, err)
	}
	return out, nil
}

// releaseOrderTx issues the held order h with the corrections in, in tx,
// and returns the licences it issued and those its add-on items added
// features to. An add-on item still finding no licence to add to answers
// 400 at /adds_to_licence_id, and the order stays held. An add-on order
// refunded, or its subscription ended, while held adds nothing.
func (s *Service) releaseOrderTx(ctx context.Context, tx store.Tx, h *licentia.HeldOrder, in HeldRelease) ([]licentia.Licence, error) {
	o, err := s.heldProviderOrder(ctx, tx, h, in)
	if err != nil {
		return nil, err
	}
	if err := releaseIssues(o.Validate(), h, in).Err(); err != nil {
		return nil, err
	}
	r, err := s.issueOrderTx(ctx, tx, *o, in.AddsToLicenceID)
	if err != nil {
		return nil, err
	}
	if len(r.unplaced) > 0 {
		var is licentia.Issues
		is.Add("/adds_to_licence_id", "the buyer holds no licence of %s in force to add to; name one", r.unplaced[0].ProductID)
		return nil, is.Err()
	}
	return append(r.issued, r.addedTo...), nil
}

// heldProviderOrder is the paid order h as IssueFromProviderTx takes it,
// with each item's mapping read now in tx and the corrections of in
// applied. Items no mapping covers now are left out, as on the webhook;
// none left answers 409 conflict.
func (s *Service) heldProviderOrder(ctx context.Context, tx store.Tx, h *licentia.HeldOrder, in HeldRelease) (*ProviderOrder, error) {
	email := deref(h.Email, "")
	if in.Email != nil {
		email = *in.Email
	}
	o := &ProviderOrder{OrgID: h.OrgID, IntegrationID: h.IntegrationID, Provider: providers.Name(h.Provider), EventID: h.EventID,
		OrderID: h.OrderID, CheckoutID: h.CheckoutID, OrderNumber: h.OrderNumber, CustomerID: h.CustomerID,
		SubscriptionID: h.SubscriptionID, Email: email, Subscription: h.Subscription, TrialEndsAt: h.TrialEndsAt}
	// An order held for unreadable text names itself by its order key.
	if o.OrderID == nil && o.CheckoutID == nil {
		o.OrderID = &h.OrderKey
	}
	for _, it := range h.Items {
		m, err := tx.Mapping(ctx, h.OrgID, h.IntegrationID, it.ProviderProductID)
		if licentia.ErrorCode(err) == licentia.CodeMappingNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		o.Items = append(o.Items, ProviderItem{ProviderProductID: m.ProviderProductID, ProductID: m.ProductID,
			LimitKind: m.LimitKind, LimitCount: m.LimitCount, Quantity: it.Quantity, KeyValidDays: m.KeyValidDays,
			RenewalURL: m.RenewalURL, OnRefund: m.OnRefund, OnSubscriptionEnd: m.OnSubscriptionEnd, SendKeyMail: m.SendKeyMail,
			Features: m.Features, AddsTo: m.AddsTo})
	}
	if len(o.Items) == 0 {
		return nil, licentia.Errorf(licentia.CodeConflict, "None of the order's products is mapped now; map one, or drop the order.")
	}
	o.Items = mergeItems(o.Items)
	if in.LimitCount != nil {
		for i := range o.Items {
			o.Items[i].LimitCount, o.Items[i].Quantity = *in.LimitCount, 1
		}
	}
	return o, nil
}

// releaseIssues turns what is still wrong with a released order into
// issues at the corrections that would mend it: /email for the buyer's
// address, /limit_count for a limit over the maximum; anything else keeps
// its own path.
func releaseIssues(is licentia.Issues, h *licentia.HeldOrder, in HeldRelease) licentia.Issues {
	var out licentia.Issues
	for _, i := range is {
		switch {
		case i.Path == "/email" && h.Email == nil && in.Email == nil:
			out.Add("/email", "is required: the order held no readable email")
		case i.Path == "/email":
			out.Add("/email", "%s", i.Message)
		case i.Path == "/items" || strings.HasPrefix(i.Path, "/items/") && strings.HasSuffix(i.Path, "/quantity"):
			out.Add("/limit_count", "is required: the mapping's limit × the quantity bought is over %d", int64(licentia.MaxLimitCount))
		default:
			out = append(out, i)
		}
	}
	return out
}

// corrected names the corrections a release made, for its audit entry:
// never the address itself.
func corrected(in HeldRelease) []string {
	out := []string{}
	for _, c := range []struct {
		name  string
		given bool
	}{{"email", in.Email != nil}, {"limit_count", in.LimitCount != nil}, {"adds_to_licence_id", in.AddsToLicenceID != nil}} {
		if c.given {
			out = append(out, c.name)
		}
	}
	return out
}

// DropHeldOrder drops a held order: it is never issued, and leaves the
// list. Order of checks: 404 not_found (a released, dropped, missing or
// another organization's order), 409 conflict (settled meanwhile).
func (s *Service) DropHeldOrder(ctx context.Context, actor licentia.Actor, orgID, id string) error {
	h, err := s.store.HeldOrder(ctx, orgID, id)
	if err != nil {
		return fmt.Errorf("drop held order %s: %w", id, err)
	}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		now := s.now()
		settled, err := tx.SettleHeldOrder(ctx, orgID, id, licentia.HeldDropped, now)
		if err != nil {
			return err
		}
		if !settled {
			return errHeldSettled()
		}
		e := licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditOrderDropped, Actor: actor, At: now}
		return events.Audit(ctx, tx, e, map[string]any{"held_order_id": h.ID, "integration_id": h.IntegrationID, "reason": h.Reason})
	})
	if err != nil {
		return fmt.Errorf("drop held order %s: %w", id, err)
	}
	return nil
}

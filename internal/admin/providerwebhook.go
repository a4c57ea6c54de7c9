package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/store"
)

// ProviderWebhook is a webhook request as a provider sent it to
// /v1/providers/{integration_id}/webhooks. The provider's signature under
// the integration's webhook secret is its only credential.
type ProviderWebhook struct {
	IntegrationID string
	Header        http.Header
	Body          []byte
}

// errSignatureInvalid is the one answer to every request not proved to
// come from a connected integration's provider: telling an unknown
// integration from a wrong signature would only help a forger.
func errSignatureInvalid(cause error) error {
	return &licentia.Error{Code: licentia.CodeWebhookSignatureInvalid,
		Message: "The webhook signature is missing or invalid.", Err: cause}
}

// errTextInvalid refuses an event holding text that is not valid UTF-8, in
// its body or in an answer of the provider's API it needed, where that
// text is what the event would act on (its id, or a refund's order id):
// 400 validation_failed, nothing written, not even the event's id. A paid
// order is held instead (see holdOrderTx).
func errTextInvalid() error {
	var is licentia.Issues
	is.Add("", "the event holds text that is not valid UTF-8")
	return fmt.Errorf("provider webhook: %w", is.Err())
}

// ProviderWebhookResult says what a provider webhook did, for the log: no
// email, order id or secret.
type ProviderWebhookResult struct {
	Provider providers.Name
	// Type is the provider's event name.
	Type string
	Kind providers.Kind
	// Repeated is true when the event was handled before; nothing changed.
	Repeated bool
	// Issued counts the licences the event issued.
	Issued int
	// Held is true when the event's paid order was kept as a held order.
	Held bool
	// Outcome is what the event did, as the integration page lists it.
	Outcome licentia.ProviderEventOutcome
}

// HandleProviderWebhook verifies a provider's webhook, reads its event and
// applies its effect in the transaction that records the event's id, so
// the effect is committed exactly once: a repeated event changes nothing,
// and one interrupted before the commit is applied when the provider sends
// it again. A provider API call the event needs that fails answers 503
// service_unavailable before anything is written.
func (s *Service) HandleProviderWebhook(ctx context.Context, w ProviderWebhook) (res *ProviderWebhookResult, err error) {
	provider := metrics.ProviderUnknown
	defer func() { s.metrics.ProviderEvent(provider, providerOutcome(res, err)) }()
	if _, ok := licentia.ParseUUID(w.IntegrationID); !ok {
		return nil, errSignatureInvalid(errors.New("malformed integration id"))
	}
	i, err := s.store.IntegrationByID(ctx, w.IntegrationID)
	switch {
	case licentia.ErrorCode(err) == licentia.CodeIntegrationNotFound:
		return nil, errSignatureInvalid(errors.New("unknown integration"))
	case err != nil:
		return nil, fmt.Errorf("provider webhook: %w", err)
	}
	name := providers.Name(i.Provider)
	provider = string(name)
	if !i.IsConnected() {
		return nil, errSignatureInvalid(errors.New("disconnected integration"))
	}
	p, ok := s.providers[name]
	if !ok {
		return nil, licentia.Errorf(licentia.CodeIntegrationsNotConfigured, "The payment provider %s is not available on this service.", name)
	}
	if err := s.integrationsReady(); err != nil {
		return nil, err
	}
	secret, err := providers.OpenWebhookSecret(s.keys, i)
	switch {
	case errors.Is(err, providers.ErrNoWebhookSecret):
		return nil, errSignatureInvalid(err)
	case err != nil:
		return nil, fmt.Errorf("provider webhook: %w", err)
	}
	if err := p.Verify(w.Header, w.Body, secret.Reveal(), s.clock.Now()); err != nil {
		return nil, errSignatureInvalid(err)
	}
	// Checked before the body is decoded: decoding turns such text into
	// U+FFFD, which must never be stored as if the provider had sent it.
	// The event is read all the same, and every string that may hold such
	// a replacement is left out of what is stored (see unreadable).
	textOK := providers.IsText(w.Body)
	apiKey, err := providers.OpenAPIKey(s.keys, i)
	if err != nil {
		return nil, fmt.Errorf("provider webhook: %w", err)
	}
	callCtx, cancel := context.WithTimeout(ctx, providers.Timeout)
	callCtx, answers := providers.WatchText(callCtx)
	ev, err := p.Parse(callCtx, w.Body, apiKey.Reveal())
	cancel()
	switch {
	case errors.Is(err, providers.ErrEventMalformed):
		var is licentia.Issues
		is.Add("", "the body is not a %s event", name)
		return nil, fmt.Errorf("provider webhook: %w", is.Err())
	case errors.Is(err, providers.ErrTextInvalid):
		return nil, errTextInvalid()
	case errors.Is(err, providers.ErrUnavailable), err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, &licentia.Error{Code: licentia.CodeServiceUnavailable,
			Message: "The payment provider did not answer; the event can be sent again.", Err: err}
	case err != nil:
		return nil, fmt.Errorf("provider webhook: %w", err)
	}
	textInvalid := !textOK || answers.Invalid()
	if textInvalid && !canReadAround(ev) {
		return nil, errTextInvalid()
	}
	in := providerEventIn{integration: i, name: name, ev: ev, textInvalid: textInvalid, body: w.Body}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		res = &ProviderWebhookResult{Provider: name, Type: ev.Type, Kind: ev.Kind}
		isNew, err := tx.RecordProviderEvent(ctx, i.ID, ev.ID, s.now())
		if err != nil {
			return err
		}
		if !isNew {
			res.Repeated = true
			return nil
		}
		if err := s.applyProviderEvent(ctx, tx, in, res); err != nil {
			return err
		}
		return tx.NoteProviderEvent(ctx, providerEventNote(i.ID, ev, res.Outcome))
	})
	if err != nil {
		return nil, fmt.Errorf("provider webhook: %w", err)
	}
	return res, nil
}

// providerOutcome is how the metrics count a provider's webhook request
// that ended with res and err. A request refused 400 (a signature not
// proved, a body that is no event) is refused; any other error is failed,
// and the provider sends the event again.
func providerOutcome(res *ProviderWebhookResult, err error) string {
	switch {
	case err != nil:
		if c := licentia.ErrorCode(err); c == licentia.CodeWebhookSignatureInvalid || c == licentia.CodeValidationFailed {
			return metrics.ProviderRefused
		}
		return metrics.ProviderFailed
	case res.Repeated:
		return metrics.ProviderRepeated
	case res.Held:
		return metrics.ProviderHeld
	case res.Kind == providers.KindIgnored:
		return metrics.ProviderIgnored
	}
	return metrics.ProviderApplied
}

// providerEventIn is a verified event to apply, with what is needed to
// hold its order: whether it held invalid text, and its body.
type providerEventIn struct {
	integration *licentia.Integration
	name        providers.Name
	ev          *providers.Event
	textInvalid bool
	body        []byte
}

// canReadAround reports whether an event that held invalid text can be
// acted on without it: the strings its effect needs (its id, an order's
// key, a refund's order id, a subscription's id) are readable. Any other
// string (a name, an email) only matters to a paid order, which is held.
func canReadAround(ev *providers.Event) bool {
	if unreadable(ev.ID) {
		return false
	}
	switch ev.Kind {
	case providers.KindOrderPaid:
		key := ev.OrderID
		if key == "" {
			key = ev.CheckoutID
		}
		return !unreadable(key)
	case providers.KindRefunded:
		return !unreadable(ev.OrderID)
	case providers.KindSubscriptionEnded, providers.KindTrialConverted:
		return !unreadable(ev.SubscriptionID)
	}
	return true
}

// applyProviderEvent applies an event's effect in tx and notes in res the
// licences it issued, or that its order was held. Kinds without an effect
// change nothing: their id is recorded all the same, so the provider is
// answered 200.
func (s *Service) applyProviderEvent(ctx context.Context, tx store.Tx, in providerEventIn, res *ProviderWebhookResult) error {
	i, name, ev := in.integration, in.name, in.ev
	res.Outcome = licentia.OutcomeNothing
	switch ev.Kind {
	case providers.KindOrderPaid:
		o, err := s.providerOrder(ctx, tx, i, name, ev)
		if err != nil || len(o.Items) == 0 {
			return err
		}
		if reason, hold := holdReason(o, in.textInvalid); hold {
			h, ok := heldOrderOf(o, ev, reason, in.body)
			if !ok {
				return errTextInvalid()
			}
			res.Held, err = s.holdOrderTx(ctx, tx, h)
			if res.Held {
				res.Outcome = licentia.OutcomeHeld
			}
			return err
		}
		r, err := s.issueOrderTx(ctx, tx, *o, nil)
		if err != nil {
			return err
		}
		res.Issued = len(r.issued)
		if res.Issued > 0 {
			res.Outcome = licentia.OutcomeIssued
		}
		if len(r.unplaced) > 0 {
			res.Held, err = s.holdAddOnsTx(ctx, tx, o, ev, r.unplaced)
			if res.Held && res.Issued == 0 {
				res.Outcome = licentia.OutcomeHeld
			}
		}
		return err
	case providers.KindRefunded:
		// A partial refund leaves the licences as they are; a refund that
		// names no order has nothing to apply to.
		if !ev.FullRefund || ev.OrderID == "" {
			return nil
		}
		out, err := s.EndFromProviderTx(ctx, tx, ProviderEnd{OrgID: i.OrgID, IntegrationID: i.ID, Provider: name,
			Kind: ProviderRefund, OrderID: &ev.OrderID})
		res.Outcome = outcomeOf(out, licentia.OutcomeRefunded)
		return err
	case providers.KindSubscriptionEnded:
		if ev.SubscriptionID == "" {
			return nil
		}
		out, err := s.EndFromProviderTx(ctx, tx, ProviderEnd{OrgID: i.OrgID, IntegrationID: i.ID, Provider: name,
			Kind: ProviderSubscriptionEnded, SubscriptionID: &ev.SubscriptionID})
		res.Outcome = outcomeOf(out, licentia.OutcomeEnded)
		return err
	case providers.KindTrialConverted:
		if ev.SubscriptionID == "" {
			return nil
		}
		out, err := s.ConvertTrialTx(ctx, tx, ProviderConversion{OrgID: i.OrgID, IntegrationID: i.ID, Provider: name,
			SubscriptionID: ev.SubscriptionID})
		res.Outcome = outcomeOf(out, licentia.OutcomeConverted)
		return err
	}
	res.Outcome = licentia.OutcomeIgnored
	return nil
}

// outcomeOf is applied when an end or conversion changed a licence or was
// kept for an order still to come, and nothing otherwise.
func outcomeOf(out *ProviderOutcome, applied licentia.ProviderEventOutcome) licentia.ProviderEventOutcome {
	if out != nil && (len(out.Changes) > 0 || out.Pending) {
		return applied
	}
	return licentia.OutcomeNothing
}

// providerEventNote is what the integration page keeps of an event: its
// name and the order or subscription it named, each left out when it
// holds text that is not valid UTF-8.
func providerEventNote(integrationID string, ev *providers.Event, outcome licentia.ProviderEventOutcome) licentia.ProviderEvent {
	kept := func(s string) string {
		if unreadable(s) {
			return ""
		}
		return s
	}
	order := ev.OrderID
	if order == "" {
		order = ev.CheckoutID
	}
	return licentia.ProviderEvent{IntegrationID: integrationID, EventID: ev.ID, Type: kept(ev.Type), Outcome: outcome,
		OrderID: optional(kept(order)), SubscriptionID: optional(kept(ev.SubscriptionID))}
}

// providerOrder turns a paid order into what IssueFromProviderTx takes,
// with each item's mapping read in tx. Items whose provider product is not
// mapped are left out: the maker sells more than it licenses.
func (s *Service) providerOrder(ctx context.Context, tx store.Tx, i *licentia.Integration, name providers.Name,
	ev *providers.Event) (*ProviderOrder, error) {
	o := &ProviderOrder{OrgID: i.OrgID, IntegrationID: i.ID, Provider: name, EventID: ev.ID,
		OrderID: optional(ev.OrderID), CheckoutID: optional(ev.CheckoutID), OrderNumber: optional(ev.OrderNumber),
		CustomerID: optional(ev.CustomerID), SubscriptionID: optional(ev.SubscriptionID), Email: ev.Email,
		Subscription: ev.Subscription, TrialEndsAt: ev.TrialEndsAt}
	for _, it := range ev.Items {
		m, err := tx.Mapping(ctx, i.OrgID, i.ID, it.ProductID)
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
	return o, nil
}

// optional is nil for an id the provider did not give.
func optional(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

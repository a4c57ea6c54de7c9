package stripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	stripeapi "github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/licentia/licentia/internal/providers"
)

// SignatureHeader is the header Stripe signs webhooks in.
const SignatureHeader = "Stripe-Signature"

// Verify checks Stripe-Signature ("t=...,v1=...") under secret with
// stripe-go, and the timestamp against now. stripe-go measures its
// tolerance against the system clock (time.Since), so the signature is
// checked ignoring it and the timestamp here, against the injected clock, in
// both directions.
func (c *Client) Verify(header http.Header, body []byte, secret string, now time.Time) error {
	sig := header.Get(SignatureHeader)
	// An empty secret would let anyone sign: HMAC under an empty key.
	if secret == "" {
		return providers.ErrSignatureInvalid
	}
	if err := webhook.ValidatePayloadIgnoringTolerance(body, sig, secret); err != nil {
		return providers.ErrSignatureInvalid
	}
	ts, ok := signedAt(sig)
	if !ok || now.Sub(ts).Abs() > providers.SignatureTolerance {
		return providers.ErrSignatureInvalid
	}
	return nil
}

// signedAt reads the t= element of a Stripe-Signature header.
func signedAt(sig string) (time.Time, bool) {
	for part := range strings.SplitSeq(sig, ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			return time.Unix(n, 0), true
		}
	}
	return time.Time{}, false
}

// Parse reads a Stripe event. Only the fields named below are read from the
// event's object, so an endpoint pinned to another API version than
// stripe-go's still parses (stripe-go's ConstructEvent would refuse it).
func (c *Client) Parse(ctx context.Context, body []byte, apiKey string) (*providers.Event, error) {
	var e stripeapi.Event
	if err := json.Unmarshal(body, &e); err != nil || e.ID == "" || e.Type == "" || e.Data == nil {
		return nil, providers.ErrEventMalformed
	}
	ev := &providers.Event{ID: e.ID, Type: string(e.Type), Kind: providers.KindIgnored}
	var err error
	switch e.Type {
	case stripeapi.EventTypeCheckoutSessionCompleted, stripeapi.EventTypeCheckoutSessionAsyncPaymentSucceeded:
		err = c.checkout(ctx, e.Data.Raw, apiKey, ev)
	case stripeapi.EventTypeChargeRefunded:
		err = c.refund(ctx, e.Data.Raw, apiKey, ev)
	case stripeapi.EventTypeCustomerSubscriptionDeleted:
		err = subscriptionEnded(e.Data.Raw, ev)
	case stripeapi.EventTypeCustomerSubscriptionUpdated:
		err = subscriptionUpdated(e.Data, ev)
	}
	if err != nil {
		return nil, fmt.Errorf("stripe %s: %w", e.Type, err)
	}
	return ev, nil
}

// checkout reads a completed checkout session. A session still awaiting an
// asynchronous payment (payment_status unpaid) is ignored: Stripe sends
// checkout.session.async_payment_succeeded when it is paid. A trial's
// session is no_payment_required. Line items are not in the event and need
// GET /v1/checkout/sessions/{id}/line_items; a trial's end is on the
// subscription (GET /v1/subscriptions/{id}).
func (c *Client) checkout(ctx context.Context, raw json.RawMessage, apiKey string, ev *providers.Event) error {
	var s stripeapi.CheckoutSession
	if err := json.Unmarshal(raw, &s); err != nil || s.ID == "" {
		return providers.ErrEventMalformed
	}
	if s.PaymentStatus == stripeapi.CheckoutSessionPaymentStatusUnpaid {
		return nil
	}
	ev.Kind = providers.KindOrderPaid
	ev.CheckoutID = s.ID
	switch {
	case s.PaymentIntent != nil:
		ev.OrderID = s.PaymentIntent.ID
	case s.Invoice != nil:
		ev.OrderID = s.Invoice.ID
	}
	if s.Customer != nil {
		ev.CustomerID = s.Customer.ID
	}
	if s.CustomerDetails != nil {
		ev.Email = s.CustomerDetails.Email
	}
	api := c.api(apiKey)
	items, err := lineItems(ctx, api, s.ID)
	if err != nil {
		return err
	}
	ev.Items = items
	if s.Mode != stripeapi.CheckoutSessionModeSubscription || s.Subscription == nil {
		return nil
	}
	ev.Subscription = true
	ev.SubscriptionID = s.Subscription.ID
	sub, err := api.V1Subscriptions.Retrieve(ctx, s.Subscription.ID, nil)
	if err != nil {
		return fmt.Errorf("subscription: %w", unavailable(err))
	}
	if sub.Status == stripeapi.SubscriptionStatusTrialing && sub.TrialEnd > 0 {
		end := time.Unix(sub.TrialEnd, 0).UTC()
		ev.TrialEndsAt = &end
	}
	return nil
}

// lineItems lists every line item of a session, following Stripe's pages.
func lineItems(ctx context.Context, api *stripeapi.Client, sessionID string) ([]providers.Item, error) {
	params := &stripeapi.CheckoutSessionListLineItemsParams{Session: stripeapi.String(sessionID)}
	params.Limit = stripeapi.Int64(100)
	var items []providers.Item
	for li, err := range api.V1CheckoutSessions.ListLineItems(ctx, params).All(ctx) {
		if err != nil {
			return nil, fmt.Errorf("line items: %w", unavailable(err))
		}
		if li.Price == nil || li.Price.Product == nil || li.Price.Product.ID == "" {
			continue
		}
		items = append(items, providers.Item{ProductID: li.Price.Product.ID, Quantity: li.Quantity})
	}
	return items, nil
}

// unavailable wraps any failure of a call made while reading an event in
// ErrUnavailable: the event cannot be processed now, whatever the cause, and
// the route asks Stripe to send it again. The specific cause stays wrapped.
func unavailable(err error) error {
	mapped := apiError(err, false)
	if errors.Is(mapped, providers.ErrTokenRefused) || errors.Is(mapped, providers.ErrPermissionDenied) {
		return fmt.Errorf("%w: %w", providers.ErrUnavailable, mapped)
	}
	return mapped
}

// refund reads charge.refunded. The order is the invoice the charge's
// payment intent paid, the id a subscription checkout's licences carry as
// order_id, or else the payment intent itself, the id a one-time checkout's
// licences carry. Since API version 2025-03-31 neither the charge nor the
// payment intent names its invoice; Stripe's Invoice Payments list,
// filtered by payment intent, does (GET /v1/invoice_payments).
func (c *Client) refund(ctx context.Context, raw json.RawMessage, apiKey string, ev *providers.Event) error {
	var ch stripeapi.Charge
	if err := json.Unmarshal(raw, &ch); err != nil || ch.ID == "" {
		return providers.ErrEventMalformed
	}
	ev.Kind = providers.KindRefunded
	if ch.Customer != nil {
		ev.CustomerID = ch.Customer.ID
	}
	ev.FullRefund = ch.Amount > 0 && ch.AmountRefunded == ch.Amount
	if ch.PaymentIntent == nil || ch.PaymentIntent.ID == "" {
		return nil
	}
	ev.OrderID = ch.PaymentIntent.ID
	invoice, err := paidInvoice(ctx, c.api(apiKey), ch.PaymentIntent.ID)
	if err != nil {
		return err
	}
	if invoice != "" {
		ev.OrderID = invoice
	}
	return nil
}

// paidInvoice names the invoice paymentIntent paid, or "" when it paid
// none (a one-time checkout's payment).
func paidInvoice(ctx context.Context, api *stripeapi.Client, paymentIntent string) (string, error) {
	params := &stripeapi.InvoicePaymentListParams{
		Payment: &stripeapi.InvoicePaymentListPaymentParams{
			Type:          stripeapi.String("payment_intent"),
			PaymentIntent: stripeapi.String(paymentIntent),
		},
		Status: stripeapi.String("paid"),
	}
	for p, err := range api.V1InvoicePayments.List(ctx, params).All(ctx) {
		if err != nil {
			return "", fmt.Errorf("invoice payments: %w", unavailable(err))
		}
		if p.Invoice != nil && p.Invoice.ID != "" {
			return p.Invoice.ID, nil
		}
	}
	return "", nil
}

func subscriptionEnded(raw json.RawMessage, ev *providers.Event) error {
	if _, err := subscription(raw, ev); err != nil {
		return err
	}
	ev.Kind = providers.KindSubscriptionEnded
	return nil
}

// subscriptionUpdated reports a trial's conversion: the subscription is
// active now and previous_attributes says it was trialing. Any other update
// is ignored.
func subscriptionUpdated(data *stripeapi.EventData, ev *providers.Event) error {
	sub, err := subscription(data.Raw, ev)
	if err != nil {
		return err
	}
	if sub.Status != stripeapi.SubscriptionStatusActive || data.PreviousAttributes["status"] != string(stripeapi.SubscriptionStatusTrialing) {
		return nil
	}
	ev.Kind = providers.KindTrialConverted
	return nil
}

// subscription reads a subscription object's ids and items into ev.
func subscription(raw json.RawMessage, ev *providers.Event) (*stripeapi.Subscription, error) {
	var sub stripeapi.Subscription
	if err := json.Unmarshal(raw, &sub); err != nil || sub.ID == "" {
		return nil, providers.ErrEventMalformed
	}
	ev.Subscription = true
	ev.SubscriptionID = sub.ID
	if sub.Customer != nil {
		ev.CustomerID = sub.Customer.ID
	}
	if sub.Items != nil {
		for _, it := range sub.Items.Data {
			if it.Price != nil && it.Price.Product != nil && it.Price.Product.ID != "" {
				ev.Items = append(ev.Items, providers.Item{ProductID: it.Price.Product.ID, Quantity: it.Quantity})
			}
		}
	}
	return &sub, nil
}

package providers

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// SignatureTolerance is how far a signed webhook's timestamp may be from
// now (Stripe and Paddle sign one; Lemon Squeezy does not): a captured
// request replayed later is refused.
const SignatureTolerance = 5 * time.Minute

// ErrSignatureInvalid is the one answer to any signature failure: missing or
// malformed header, wrong secret, changed body, stale timestamp. The route
// answers them all alike, so telling them apart would only help a forger.
var ErrSignatureInvalid = errors.New("the webhook signature is invalid")

// ErrEventMalformed reports a signed body that is not the provider's event
// shape: the provider sent it, but there is nothing the service can act on.
var ErrEventMalformed = errors.New("the webhook body is not a provider event")

// Webhooks reads one provider's webhook requests.
type Webhooks interface {
	// Verify checks the request's signature under secret, and for providers
	// that sign a timestamp, that it lies within SignatureTolerance of now.
	// Any failure is ErrSignatureInvalid.
	Verify(header http.Header, body []byte, secret string, now time.Time) error
	// Parse turns a verified body into an Event. Events the service does
	// not act on come back as KindIgnored, not as an error. When the event
	// needs an API call with apiKey (Stripe's line items) and it fails, the
	// error wraps ErrUnavailable, so the provider is asked to send again.
	Parse(ctx context.Context, body []byte, apiKey string) (*Event, error)
}

// Provider is everything the service asks of one provider.
type Provider interface {
	Client
	Webhooks
}

// Kind is what a provider event means to the service.
type Kind string

const (
	// KindIgnored is any event the service does not act on.
	KindIgnored Kind = "ignored"
	// KindOrderPaid is a paid order or a subscription's start, trialing
	// ones included: licences are issued for its mapped items.
	KindOrderPaid Kind = "order_paid"
	// KindRefunded is a refund of an order; Event.FullRefund says whether
	// it was the whole amount, the only refund that has an effect.
	KindRefunded Kind = "refunded"
	// KindSubscriptionEnded is a subscription that has ended for good.
	KindSubscriptionEnded Kind = "subscription_ended"
	// KindTrialConverted is a subscription leaving its trial for paid.
	KindTrialConverted Kind = "trial_converted"
)

// Item is one product bought in an order: the provider's product id (the id
// a mapping names) and how many.
type Item struct {
	ProductID string
	Quantity  int64
}

// Event is a provider's webhook event, normalized. Ids are the provider's;
// empty when the event does not carry them.
type Event struct {
	// ID is the provider's event id, unique per integration, so a resent
	// event is recognised.
	ID string
	// Type is the provider's own event name, for logs.
	Type    string
	Kind    Kind
	OrderID string
	// OrderNumber is the order's number on the buyer's receipt, where the
	// provider has one apart from the order id.
	OrderNumber    string
	CheckoutID     string
	CustomerID     string
	SubscriptionID string
	// Email is the customer's; never logged.
	Email string
	Items []Item
	// Subscription reports whether the order starts a subscription (its
	// licences carry no expiry of their own).
	Subscription bool
	// TrialEndsAt is set when the order starts a subscription in its trial.
	TrialEndsAt *time.Time
	// FullRefund reports, for KindRefunded, whether the whole amount was
	// refunded.
	FullRefund bool
}

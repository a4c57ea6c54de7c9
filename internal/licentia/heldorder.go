package licentia

import "time"

// HeldReason says why a paid order could not be issued as it stood.
type HeldReason string

// Held-order reasons, as the API spells them.
const (
	// HeldEmailInvalid is a buyer's email failing the email rule.
	HeldEmailInvalid HeldReason = "email_invalid"
	// HeldTextInvalid is a string in the provider's event (or in an
	// answer of its API the event needed) that is not valid UTF-8.
	HeldTextInvalid HeldReason = "text_invalid"
	// HeldLimitTooLarge is a mapping's limit × the quantity bought over
	// MaxLimitCount.
	HeldLimitTooLarge HeldReason = "limit_too_large"
	// HeldNoLicenceToAddTo is an add-on order with no licence of the
	// buyer to add to (issue 26).
	HeldNoLicenceToAddTo HeldReason = "no_licence_to_add_to"
)

// HeldReasons lists every reason, in the order documents list them.
var HeldReasons = []HeldReason{HeldEmailInvalid, HeldTextInvalid, HeldLimitTooLarge, HeldNoLicenceToAddTo}

// HeldStatus is where a held order stands: held until it is released
// (issued) or dropped.
type HeldStatus string

// Held-order statuses.
const (
	HeldPending  HeldStatus = "held"
	HeldReleased HeldStatus = "released"
	HeldDropped  HeldStatus = "dropped"
)

// HeldItem is one line item of a held order as the provider sent it: the
// provider's product (Stripe product, Paddle product, Lemon Squeezy
// variant) and the quantity. ProductID is the product its mapping named
// when the order was held, nil for an item no mapping covered.
type HeldItem struct {
	ProviderProductID string  `json:"provider_product_id"`
	Quantity          int64   `json:"quantity"`
	ProductID         *string `json:"product_id"`
}

// HeldOrder is a paid order kept, unissued, until a maker releases it
// with corrections or drops it. It holds what issuing needs; the
// mappings are read again when it is released.
type HeldOrder struct {
	ID            string
	OrgID         string
	IntegrationID string
	Provider      string
	// EventID is the provider event that brought the order.
	EventID string
	// OrderKey is the order id, or the checkout id when there is none:
	// one order is held once per integration.
	OrderKey       string
	OrderID        *string
	CheckoutID     *string
	OrderNumber    *string
	CustomerID     *string
	SubscriptionID *string
	// Email is the buyer's as sent; nil when it was not readable text.
	Email        *string
	Subscription bool
	TrialEndsAt  *time.Time
	Reason       HeldReason
	Items        []HeldItem
	// RawBody is the event's body exactly as received, kept for an order
	// held for text that is not valid UTF-8 (never decoded, so no
	// replacement character is stored), and erased once it is settled.
	RawBody   []byte
	Status    HeldStatus
	CreatedAt time.Time
	SettledAt *time.Time
}

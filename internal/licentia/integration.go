package licentia

import (
	"regexp"
	"time"
)

// Integration is a connected payment-provider account. Its API key and
// webhook secret are stored sealed under the master key and never leave
// the service.
type Integration struct {
	ID        string
	OrgID     string
	Provider  string
	Name      string
	AccountID string
	Livemode  bool
	// SealedAPIKey and SealedWebhookSecret are sealed under the master key
	// whose fingerprint is MasterFingerprint.
	SealedAPIKey        []byte
	SealedWebhookSecret []byte
	MasterFingerprint   string
	CreatedAt           time.Time
	// DisconnectedAt is set once the integration is disconnected: it is no
	// longer listed and receives nothing, and its licences stay.
	DisconnectedAt *time.Time
}

// IsConnected reports whether the integration has not been disconnected.
func (i *Integration) IsConnected() bool { return i.DisconnectedAt == nil }

// OnRefund is what a full refund does to an order's licences.
type OnRefund string

// Refund actions.
const (
	RefundRevoke OnRefund = "revoke"
	RefundNone   OnRefund = "none"
)

// OnSubscriptionEnd is what the end of a subscription does to its licences.
type OnSubscriptionEnd string

// Subscription-end actions.
const (
	SubscriptionEndExpire OnSubscriptionEnd = "expire"
	SubscriptionEndRevoke OnSubscriptionEnd = "revoke"
)

// Mapping ties one provider product to one of the maker's products, with
// the terms of the licences a sale of it issues.
type Mapping struct {
	IntegrationID     string
	ProviderProductID string
	ProductID         string
	LimitKind         LimitKind
	LimitCount        int64
	// KeyValidDays is how long a one-time purchase's licence lasts; nil for
	// no expiry.
	KeyValidDays      *int64
	OnRefund          OnRefund
	OnSubscriptionEnd OnSubscriptionEnd
	RenewalURL        *string
	// SendKeyMail says whether a paid order mails the buyer their keys.
	SendKeyMail bool
	// Features are codes of the product's catalogue granted, without an
	// expiry, to the licences a sale issues, or added to the buyer's
	// licence by an add-on.
	Features []string
	// AddsTo makes the mapping an add-on: a sale adds Features to the
	// buyer's newest licence in force of this product (ProductID) instead
	// of issuing one; nil for a mapping that issues licences.
	AddsTo    *string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// MaxRenewalURL is the longest renewal_url a mapping takes.
const MaxRenewalURL = 2048

var providerProductIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// CheckProviderProductID returns the issue of a provider product id that is
// not 1 to 100 characters of A-Z a-z 0-9 _ -, or "".
func CheckProviderProductID(id string) string {
	if !providerProductIDRE.MatchString(id) {
		return "must be 1 to 100 of A-Z a-z 0-9 _ -"
	}
	return ""
}

// ProviderEvent is a provider event an integration received and handled,
// as the integration page lists it. Only events whose signature was proved
// are kept: an unsigned request could write anything.
type ProviderEvent struct {
	IntegrationID string
	EventID       string
	// Type is the provider's event name; "" when it was not readable.
	Type    string
	Outcome ProviderEventOutcome
	// OrderID and SubscriptionID are what the event named, when it did.
	OrderID        *string
	SubscriptionID *string
	ReceivedAt     time.Time
}

// ProviderEventOutcome is what a provider event did.
type ProviderEventOutcome string

// Provider event outcomes. An event recorded before outcomes were kept
// reads as OutcomeUnknown.
const (
	OutcomeIssued    ProviderEventOutcome = "issued"    // licences issued (or features added)
	OutcomeHeld      ProviderEventOutcome = "held"      // its order was kept as a held order
	OutcomeRefunded  ProviderEventOutcome = "refunded"  // a full refund was applied
	OutcomeEnded     ProviderEventOutcome = "ended"     // a subscription's end was applied
	OutcomeConverted ProviderEventOutcome = "converted" // a trial's conversion was applied
	OutcomeNothing   ProviderEventOutcome = "nothing"   // understood, but nothing to change (no mapped product, a partial refund)
	OutcomeIgnored   ProviderEventOutcome = "ignored"   // an event Licentia does not act on
	OutcomeUnknown   ProviderEventOutcome = ""
)

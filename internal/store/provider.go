package store

import "time"

// ProviderItem ties a licence to the provider order item that issued it.
// One order item issues one licence: (IntegrationID, OrderKey,
// ProviderProductID) is unique. OnRefund and OnSubscriptionEnd are the
// mapping's actions when the licence was issued, so a later change of the
// mapping does not change what a refund of an earlier order does.
type ProviderItem struct {
	LicenceID         string
	OrgID             string
	IntegrationID     string
	OrderKey          string
	ProviderProductID string
	OnRefund          string
	OnSubscriptionEnd string
}

// PendingKind is what a pending provider effect does once its order's
// licences are issued.
type PendingKind string

// Pending effect kinds.
const (
	PendingRefund          PendingKind = "refund"
	PendingSubscriptionEnd PendingKind = "subscription_end"
	PendingTrialConversion PendingKind = "trial_conversion"
)

// PendingEffect is a refund, subscription end or trial conversion seen
// before the order it concerns. Ref is the order id of a refund, the
// subscription id otherwise; HappenedAt is when the provider says it
// happened (a subscription's end).
type PendingEffect struct {
	OrgID         string
	IntegrationID string
	Kind          PendingKind
	Ref           string
	HappenedAt    time.Time
}

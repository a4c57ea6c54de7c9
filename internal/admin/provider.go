package admin

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/store"
)

// Limits of what a provider order carries.
const (
	MaxKeyValidDays  = 36500
	MaxProviderRef   = 255
	maxProviderItems = 100
)

// ProviderItem is one line of a paid order whose provider product is
// mapped, with what the mapping says.
type ProviderItem struct {
	ProviderProductID string
	ProductID         string
	LimitKind         licentia.LimitKind
	// LimitCount is the mapping's; each licence holds LimitCount ×
	// Quantity.
	LimitCount        int64
	Quantity          int64
	KeyValidDays      *int64
	RenewalURL        *string
	OnRefund          licentia.OnRefund
	OnSubscriptionEnd licentia.OnSubscriptionEnd
	// SendKeyMail puts the item's licence in the order's key mail.
	SendKeyMail bool
	// Features are the mapping's codes, granted to the item's licence.
	Features []string
	// AddsTo makes the item an add-on: Features go to the buyer's licence
	// of ProductID, and no licence is issued.
	AddsTo *string
}

// ProviderOrder is a paid order (or a started trial) as a provider reports
// it. OrderID or CheckoutID names it; the order id, when given, is its key.
type ProviderOrder struct {
	OrgID         string
	IntegrationID string
	Provider      providers.Name
	// EventID is the provider's event, named in the issue's audit entry.
	EventID    string
	OrderID    *string
	CheckoutID *string
	// OrderNumber is the order's number on the buyer's receipt (Lemon
	// Squeezy's order number, Paddle's invoice number), which purchase
	// lookup matches too; nil where the provider has none.
	OrderNumber    *string
	CustomerID     *string
	SubscriptionID *string
	Email          string
	// Subscription is true for a subscription's first order; its licences
	// run until the subscription ends.
	Subscription bool
	// TrialEndsAt is set when the subscription starts with a trial.
	TrialEndsAt *time.Time
	Items       []ProviderItem
}

// orderKey is what makes an order item's licence unique: the order id, or
// the checkout id when the provider gives no order id.
func (o *ProviderOrder) orderKey() string {
	if o.OrderID != nil {
		return *o.OrderID
	}
	return deref(o.CheckoutID, "")
}

// Validate reports every problem of a provider order.
func (o *ProviderOrder) Validate() licentia.Issues {
	var is licentia.Issues
	checkProviderCaller(&is, o.OrgID, o.IntegrationID, o.Provider)
	for _, r := range []struct {
		path string
		v    *string
	}{{"/order_id", o.OrderID}, {"/checkout_id", o.CheckoutID}, {"/order_number", o.OrderNumber}, {"/customer_id", o.CustomerID},
		{"/subscription_id", o.SubscriptionID}} {
		checkProviderRef(&is, r.path, r.v)
	}
	if o.OrderID == nil && o.CheckoutID == nil {
		is.Add("/order_id", "is required when there is no checkout id")
	}
	if o.Subscription && o.SubscriptionID == nil {
		is.Add("/subscription_id", "is required for a subscription")
	}
	if !o.Subscription && o.TrialEndsAt != nil {
		is.Add("/trial_ends_at", "is for subscriptions only")
	}
	is.CheckString("/email", &o.Email, licentia.CheckEmail)
	if len(o.Items) > maxProviderItems {
		is.Add("/items", "must be at most %d", maxProviderItems)
	}
	for i, it := range o.Items {
		p := fmt.Sprintf("/items/%d", i)
		checkProviderRef(&is, p+"/provider_product_id", &it.ProviderProductID)
		is.CheckString(p+"/product_id", &it.ProductID, licentia.CheckProductID)
		if it.LimitKind != licentia.LimitSeats && it.LimitKind != licentia.LimitMachines {
			is.Add(p+"/limit_kind", "must be seats or machines")
		}
		switch {
		case it.LimitCount < 1 || it.LimitCount > licentia.MaxLimitCount:
			is.Add(p+"/limit_count", "must be 1 to %d", int64(licentia.MaxLimitCount))
		case it.Quantity < 1 || it.Quantity > licentia.MaxLimitCount/it.LimitCount:
			is.Add(p+"/quantity", "must be at least 1, and limit_count × quantity at most %d", int64(licentia.MaxLimitCount))
		}
		if it.KeyValidDays != nil && (*it.KeyValidDays < 1 || *it.KeyValidDays > MaxKeyValidDays) {
			is.Add(p+"/key_valid_days", "must be 1 to %d", MaxKeyValidDays)
		}
		if u := it.RenewalURL; u != nil && (utf8.RuneCountInString(*u) > licentia.MaxRenewalURL || licentia.HasControl(*u)) {
			is.Add(p+"/renewal_url", "must be at most %d characters without control characters", licentia.MaxRenewalURL)
		}
		if it.OnRefund != licentia.RefundRevoke && it.OnRefund != licentia.RefundNone {
			is.Add(p+"/on_refund", "must be revoke or none")
		}
		if it.OnSubscriptionEnd != licentia.SubscriptionEndExpire && it.OnSubscriptionEnd != licentia.SubscriptionEndRevoke {
			is.Add(p+"/on_subscription_end", "must be expire or revoke")
		}
	}
	if len(is) > 0 {
		return is
	}
	// Items of one provider product make one licence.
	for _, it := range mergeItems(o.Items) {
		if it.Quantity > licentia.MaxLimitCount/it.LimitCount {
			is.Add("/items", "limit_count × quantity of %s must be at most %d", it.ProviderProductID, int64(licentia.MaxLimitCount))
		}
	}
	return is
}

// checkProviderCaller checks who a provider effect comes from.
func checkProviderCaller(is *licentia.Issues, orgID, integrationID string, name providers.Name) {
	if _, ok := licentia.ParseUUID(orgID); !ok {
		is.Add("/org_id", "must be a UUID")
	}
	if _, ok := licentia.ParseUUID(integrationID); !ok {
		is.Add("/integration_id", "must be a UUID")
	}
	if !slices.Contains(providers.Names, name) {
		is.Add("/provider", "must be one of %v", providers.Names)
	}
}

// checkProviderRef checks a provider's id: 1 to MaxProviderRef printable
// characters.
func checkProviderRef(is *licentia.Issues, path string, v *string) {
	if v == nil {
		return
	}
	if n := utf8.RuneCountInString(*v); n < 1 || n > MaxProviderRef || licentia.HasControl(*v) {
		is.Add(path, "must be 1 to %d printable characters", MaxProviderRef)
	}
}

// providerActor is the audit actor of a provider's changes: the
// integration that received them.
func providerActor(integrationID string) licentia.Actor {
	return licentia.Actor{Type: licentia.ActorProvider, ID: &integrationID}
}

// providerReason is the reason of a provider's status change, in the
// prefix administration callers may not use.
func providerReason(name providers.Name, what string) string {
	return licentia.ReservedReasonPrefix + string(name) + ":" + what
}

// ProviderOutcome is what a provider's end or conversion did: the changes
// of the licences it found, or, when it found none, that it was kept until
// their order is issued.
type ProviderOutcome struct {
	Changes []Change
	Pending bool
}

// lockProviderLicences locks the licences of its, in the order given (by
// licence id), before any of them changes: licence rows come before
// counters and inserts (docs/design.md, "Lock order").
func lockProviderLicences(ctx context.Context, tx store.Tx, orgID string, its []store.ProviderItem) ([]*licentia.Licence, error) {
	out := make([]*licentia.Licence, len(its))
	for i, it := range its {
		l, err := tx.LockLicence(ctx, orgID, it.LicenceID)
		if err != nil {
			return nil, err
		}
		out[i] = l
	}
	return out, nil
}

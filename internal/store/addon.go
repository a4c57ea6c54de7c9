package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// ProviderAddon is an add-on order item: a sale of a mapping with adds_to,
// which adds its features to the buyer's licence instead of issuing one.
// (IntegrationID, OrderKey, ProviderProductID) is unique, so an order seen
// twice adds nothing more. Added is what removal takes away again: the
// codes this item holds on the licence, those it put there (a code the
// licence had already stays when the item ends).
type ProviderAddon struct {
	OrgID             string
	IntegrationID     string
	OrderKey          string
	ProviderProductID string
	// The order's references, by which its refund and its subscription's
	// end find it.
	OrderID        *string
	CheckoutID     *string
	SubscriptionID *string
	// LicenceID is the licence the features went to; nil when the order
	// added nothing (refunded or ended before it arrived).
	LicenceID *string
	// Features are the codes the mapping granted when the order arrived.
	Features []string
	Added    []string
	// EndedAt is when a full refund or the subscription's end removed
	// them; nil while they hold.
	EndedAt *time.Time
}

// EncodeCodes is the stored form of a list of feature codes.
func EncodeCodes(codes []string) string {
	if len(codes) == 0 {
		return "[]"
	}
	b, err := json.Marshal(codes)
	if err != nil {
		panic(err) // strings always encode
	}
	return string(b)
}

// DecodeCodes is the inverse of EncodeCodes; none read as nil.
func DecodeCodes(s string) ([]string, error) {
	if s == "" || s == "[]" {
		return nil, nil
	}
	var codes []string
	if err := json.Unmarshal([]byte(s), &codes); err != nil {
		return nil, fmt.Errorf("read feature codes: %w", err)
	}
	return codes, nil
}

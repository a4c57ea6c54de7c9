package sqlite

import (
	"slices"
	"strings"
	"testing"
)

// TestPurchaseLookupReadsByIndexes shows that a purchase lookup, which
// any client may send, finds the order's licences through the partial
// indexes of order ids, checkout ids and order numbers, and scans no
// organization's licences.
func TestPurchaseLookupReadsByIndexes(t *testing.T) {
	db, _ := openWith(t)
	plan := queryPlan(t, db.read, purchaseLicencesQuery, "1001")
	for _, index := range []string{"licences_by_provider_order ", "licences_by_provider_checkout ", "licences_by_provider_order_number "} {
		if !slices.ContainsFunc(plan, func(d string) bool { return strings.Contains(d, "INDEX "+index) }) {
			t.Errorf("plan %q does not search %s", plan, index)
		}
	}
	for _, d := range plan {
		if strings.HasPrefix(d, "SCAN licences") {
			t.Errorf("plan %q scans the licences", plan)
		}
	}
}

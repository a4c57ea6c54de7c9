package sqlite

import (
	"database/sql"
	"strings"
	"testing"
)

// TestCountsSinceReadIndexesOnly shows that issued_since and revoked_since,
// of the organization and of one product, each search an index holding
// every column they read, with the product among the searched columns when
// there is one. Reading the licences themselves to test their product took
// the counts of a product of a million licences past 100 ms.
func TestCountsSinceReadIndexesOnly(t *testing.T) {
	db, _ := openWith(t)
	for _, product := range []bool{false, true} {
		plan := queryPlan(t, db.read, sinceSQL(product),
			sql.Named("org", "org"), sql.Named("since", 0), sql.Named("product", "product"))
		searches := 0
		for _, d := range plan {
			if !strings.Contains(d, "licences") {
				continue
			}
			searches++
			// The time is searched as a range of the index, not tested
			// on each of the organization's or product's entries.
			if !strings.HasPrefix(d, "SEARCH licences USING COVERING INDEX ") || !strings.Contains(d, "(org_id=? AND ") ||
				!strings.HasSuffix(d, "_at>?)") || (product && !strings.Contains(d, "product_id=?")) {
				t.Errorf("product %t: plan step %q, want a covering index searched by org_id, product_id when given, and a time range", product, d)
			}
		}
		if searches != 2 {
			t.Errorf("product %t: plan %q, want two searches of licences", product, plan)
		}
	}
}

// TestProviderItemsReadTheirLicences shows that the items of an order or a
// subscription are found from its licences, through the indexes of
// migrations 0007 and 0008, and never by reading every item of the
// integration.
func TestProviderItemsReadTheirLicences(t *testing.T) {
	db, _ := openWith(t)
	for _, tt := range []struct {
		query string
		index []string
	}{
		{providerItemsByOrderQuery, []string{"licences_by_provider_order", "licences_by_provider_checkout"}},
		{providerItemsBySubscriptionQuery, []string{"licences_by_provider_subscription"}},
	} {
		plan := queryPlan(t, db.read, tt.query, "ref", "org", "integration")
		all := strings.Join(plan, "\n")
		for _, ix := range tt.index {
			if !strings.Contains(all, "SEARCH l USING INDEX "+ix+" ") {
				t.Errorf("plan %q, want licences searched through %s", plan, ix)
			}
		}
		if strings.Contains(all, "provider_items_by_order") {
			t.Errorf("plan %q reads the integration's items through provider_items_by_order", plan)
		}
	}
}

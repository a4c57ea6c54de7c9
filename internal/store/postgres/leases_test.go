package postgres_test

import (
	"testing"
	"time"

	"github.com/licentia/licentia/internal/store/postgres"
)

// TestExpiredLeasesReadIndexes shows that the lease sweep reaches
// activations only through indexes: the products with an interval, their
// licences by organization and product, and each licence's live
// activations by last_seen_at. No table is read whole, so the activations
// of products without leases cost nothing (see explainer for how the plan
// is asked).
func TestExpiredLeasesReadIndexes(t *testing.T) {
	plan, raw := explainer(t)(postgres.LeasesSQL, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), 100)
	want := map[string]string{"products": "products_heartbeat", "licences": "licences_by_product_list", "activations": "activations_live_seen"}
	got := map[string]string{}
	for n := range plan.walk {
		if n.Relation != "" {
			got[n.Relation] = n.Index
		}
	}
	for rel, index := range want {
		if got[rel] != index {
			t.Errorf("%s read by index %q, want %s; plan %s", rel, got[rel], index, raw)
		}
	}
}

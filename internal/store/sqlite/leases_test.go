package sqlite

import (
	"strings"
	"testing"
)

// TestExpiredLeasesReadIndexes shows that the lease sweep reaches
// activations through the products with an interval and their licences,
// by index, and never reads the activations of other products.
func TestExpiredLeasesReadIndexes(t *testing.T) {
	db, _ := openWith(t)
	plan := queryPlan(t, db.read, leasesQuery, int64(0), 100)
	all := strings.Join(plan, "\n")
	for _, want := range []string{"SCAN p USING INDEX products_heartbeat", "USING COVERING INDEX licences_by_product_list (org_id=? AND product_id=?)",
		"SEARCH a USING INDEX activations_live_seen (licence_id=? AND last_seen_at<?)"} {
		if !strings.Contains(all, want) {
			t.Errorf("plan %q, want %q", plan, want)
		}
	}
}

package sqlite

import (
	"strings"
	"testing"
)

// TestLicenceActivationsReadByLicence shows that listing a licence's
// activations, and anonymising them, search the licence's index. Without
// the hint SQLite's planner, which has no statistics, takes the
// organization's machine index and reads every activation of the
// organization.
func TestLicenceActivationsReadByLicence(t *testing.T) {
	db, _ := openWith(t)
	for _, tt := range []struct {
		query string
		args  []any
	}{
		{licenceActivationsQuery, []any{"org", "licence"}},
		{anonymiseActivationsQuery, []any{int64(0), "org", "licence"}},
	} {
		plan := queryPlan(t, db.read, tt.query, tt.args...)
		if all := strings.Join(plan, "\n"); !strings.Contains(all, "USING INDEX activations_by_licence (licence_id=?)") {
			t.Errorf("plan of %s\n= %q, want a search of activations_by_licence by licence_id", tt.query, plan)
		}
	}
}

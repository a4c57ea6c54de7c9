package sqlite_test

import (
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, storetest.OpenSQLite)
}

// TestLicenceActivationsReadByLicence holds the statements on a licence's
// activations to the licence's index. Without it SQLite's planner takes
// the organization's machine index and reads every activation of the
// organization.
func TestLicenceActivationsReadByLicence(t *testing.T) {
	db := storetest.OpenSQLite(t).(*sqlite.DB)
	for _, q := range sqlite.LicenceActivationsQueries {
		args := []any{"org", "licence"}
		if strings.HasPrefix(q, "UPDATE") {
			args = append([]any{int64(0)}, args...)
		}
		rows, err := sqlite.Writer(db).QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatalf("EXPLAIN %s: %v", q, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(plan, "; "); !strings.Contains(got, "USING INDEX activations_by_licence (licence_id=?)") {
			t.Errorf("plan of %s\n= %s, want a search of activations_by_licence by licence_id", q, got)
		}
	}
}

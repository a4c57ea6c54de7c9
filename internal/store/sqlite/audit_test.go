package sqlite

import (
	"database/sql"
	"strings"
	"testing"
)

// TestAuditByDayReadsItsDays shows that counting the last days of an
// organization's audit log walks its index from the newest entry: it
// never reads the organization's older entries, however many.
func TestAuditByDayReadsItsDays(t *testing.T) {
	db, _ := openWith(t)
	plan := queryPlan(t, db.read, auditByDaySQL(2),
		sql.Named("org", "org"), sql.Named("since", 0), sql.Named("a0", "x"), sql.Named("a1", "y"))
	var searches []string
	for _, d := range plan {
		if strings.Contains(d, "audit_log") {
			searches = append(searches, d)
		}
	}
	want := []string{
		"SEARCH audit_log USING INDEX audit_log_by_org (org_id=? AND seq>?)",
		"SEARCH audit_log USING INDEX audit_log_by_org (org_id=?)",
	}
	if strings.Join(searches, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan of audit_log %q, want %q (whole plan %q)", searches, want, plan)
	}
}

package console

import (
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
)

type auditPage struct {
	Entries []licentia.AuditEntry
	// Next is the cursor of the next, older page, or nil.
	Next *string
}

// audit shows the organization's audit log, newest first, a page at a
// time (?before=<entry id>): team changes, licence changes and the rest.
func (s *Server) audit(w http.ResponseWriter, r *http.Request, v *visit) error {
	es, next, err := s.admin.OrganizationAudit(r.Context(), v.orgID(), optional(r.URL.Query(), "before"))
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "audit", &view{Title: "Audit log", Section: "audit", Visit: v, Data: auditPage{Entries: es, Next: next}})
}

package console

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// switchOrganization moves the session to another organization of the
// member's address, named by its slug in the field org.
func (s *Server) switchOrganization(w http.ResponseWriter, r *http.Request, v *visit) error {
	slug := r.PostForm.Get("org")
	i := slices.IndexFunc(v.Orgs, func(m licentia.Membership) bool { return m.OrgSlug == slug })
	if i < 0 {
		var is licentia.Issues
		is.Add("/org", "is not an organization you are a member of")
		return is.Err()
	}
	ctx := r.Context()
	if err := s.store.InTx(ctx, func(tx store.Tx) error {
		return tx.SetSessionOrganization(ctx, v.Session.ID, v.Orgs[i].OrgID)
	}); err != nil {
		return fmt.Errorf("switch organization: %w", err)
	}
	return seeOther(w, r, "/console/", "switched")
}

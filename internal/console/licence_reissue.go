package console

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
)

// reissueLicence replaces a leaked key from the licence page: the new
// licence takes over the machines, and the member lands on its page, where
// the new key is shown. A refusal (the licence revoked, expired or
// anonymised meanwhile, or no reason) shows the licence page again with it.
func (s *Server) reissueLicence(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := licenceID(r.PathValue("id"))
	if err != nil {
		return err
	}
	var in admin.Reissue
	decodeForm(r.PostForm, &in)
	out, err := s.admin.ReissueLicence(r.Context(), v.actor(), v.orgID(), id, in)
	if p := refusal("reissue", r, err); p != nil {
		return s.showLicence(w, r, v, id, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/licences/"+out.Licence.ID, "reissued")
}

package console

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
)

// sendKey queues a mail of the licence's key to its customer, within the
// key-mail limit; a refusal shows on the licence page.
func (s *Server) sendKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := licenceID(r.PathValue("id"))
	if err != nil {
		return err
	}
	_, err = s.admin.SendKey(r.Context(), v.actor(), v.orgID(), id, admin.SendKeyRequest{})
	if p := refusal("send-key", r, err); p != nil {
		return s.showLicence(w, r, v, id, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/licences/"+id, "key-mailed")
}

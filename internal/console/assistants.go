package console

import (
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
)

type assistantsPage struct {
	Grants []licentia.Grant
}

// assistants lists the AI assistants the member allowed to act as them,
// with a button ending each: a member sees and ends only their own.
func (s *Server) assistants(w http.ResponseWriter, r *http.Request, v *visit) error {
	gs, err := s.admin.Grants(r.Context(), v.acting())
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "assistants", &view{Title: "AI assistants", Section: "assistants", Visit: v,
		Notice: notice(r), Data: assistantsPage{Grants: gs}})
}

// revokeGrant ends one of the member's grants: the assistant's tokens stop
// working at once.
func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request, v *visit) error {
	changed, err := s.admin.RevokeGrant(r.Context(), v.acting(), r.PathValue("id"))
	if err != nil {
		return err
	}
	done := "grant-revoked"
	if !changed {
		done = "unchanged"
	}
	return seeOther(w, r, "/console/assistants", done)
}

package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

type mailJSON struct {
	ID     string              `json:"id"`
	Status licentia.MailStatus `json:"status"`
}

// sendKey queues a mail of the licence's key: 202 with the mail as it
// stands, queued until the worker hands it over. The body is read with no
// field allowed, so anything but an empty body or {} is refused.
func (s *Server) sendKey(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	web.ReadQuery(r, &is)
	if _, err := web.ReadBody(r, &is); err != nil {
		return err
	}
	in := admin.SendKeyRequest{Decoded: licentia.Decoded{Before: is}}
	c := callerOf(r)
	m, err := s.admin.SendKey(r.Context(), c.Actor, c.OrgID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"mail": mailJSON{ID: m.ID, Status: m.Status}})
	return nil
}

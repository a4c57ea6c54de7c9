package portal

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// ReissueReason is the reason a reissue from the portal records.
const ReissueReason = "requested by the customer in the portal"

// reissueEvery is how often the portal reissues one licence's key: a
// licence that is itself the reissue of another within it is refused.
const reissueEvery = 24 * time.Hour

// refused shows the licences page again with a refusal of the customer's
// form, with its status; an error that is no refusal (a server error) is
// returned for the error page.
func (s *Server) refused(w http.ResponseWriter, r *http.Request, c *customer, err error) error {
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok || e.Code == licentia.CodeInternal {
		return err
	}
	status := web.Status(e.Code)
	if status >= 500 {
		return err
	}
	msg := e.Message
	if issues, ok := e.Details["issues"].([]licentia.Issue); ok && len(issues) > 0 {
		msg = "The " + strings.TrimPrefix(issues[0].Path, "/") + " " + issues[0].Message + "."
	}
	return s.showLicences(w, r, c, status, "", msg)
}

// done redirects to the licences page after a change, or shows its
// refusal.
func (s *Server) done(w http.ResponseWriter, r *http.Request, c *customer, err error, notice string) error {
	if err != nil {
		return s.refused(w, r, c, err)
	}
	return seeOther(w, r, c.brand, notice)
}

// freeMachine frees a machine of one of the customer's licences, so its
// seat can be used by another.
func (s *Server) freeMachine(w http.ResponseWriter, r *http.Request, c *customer) error {
	a, err := s.ownMachine(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return s.refused(w, r, c, err)
	}
	ch, err := s.admin.DeactivateActivation(r.Context(), licentia.CustomerActor, c.orgID(), a.ID)
	if err == nil && !ch.Changed {
		return seeOther(w, r, c.brand, "unchanged")
	}
	return s.done(w, r, c, err, "freed")
}

// renameMachine changes the label of a machine of one of the customer's
// licences.
func (s *Server) renameMachine(w http.ResponseWriter, r *http.Request, c *customer) error {
	a, err := s.ownMachine(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return s.refused(w, r, c, err)
	}
	label := r.PostForm.Get("label")
	ch, err := s.admin.RenameActivation(r.Context(), licentia.CustomerActor, c.orgID(), a.ID, admin.RenameMachine{Label: &label})
	if err == nil && !ch.Changed {
		return seeOther(w, r, c.brand, "unchanged")
	}
	return s.done(w, r, c, err, "renamed")
}

// sendKey mails the licence's key to the customer again, within the
// key-mail limit every sender shares.
func (s *Server) sendKey(w http.ResponseWriter, r *http.Request, c *customer) error {
	v, err := s.ownLicence(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return s.refused(w, r, c, err)
	}
	_, err = s.admin.SendKey(r.Context(), licentia.CustomerActor, c.orgID(), v.Licence.ID, admin.SendKeyRequest{})
	return s.done(w, r, c, err, "key-mailed")
}

// reissue replaces the licence's key, for one that leaked: the new licence
// takes over its machines. From the portal a licence is reissued at most
// once a day: one that is itself a reissue less than a day old is
// refused.
func (s *Server) reissue(w http.ResponseWriter, r *http.Request, c *customer) error {
	v, err := s.ownLicence(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return s.refused(w, r, c, err)
	}
	if l := v.Licence; l.Replaces != nil && s.now().Sub(l.IssuedAt) < reissueEvery {
		return s.refused(w, r, c, licentia.Errorf(licentia.CodeRateLimited,
			"This key was replaced less than a day ago; it can be replaced again from %s.",
			l.IssuedAt.Add(reissueEvery).UTC().Format("2 Jan 2006 15:04 UTC")))
	}
	reason := ReissueReason
	_, err = s.admin.ReissueLicence(r.Context(), licentia.CustomerActor, c.orgID(), v.Licence.ID, admin.Reissue{Reason: &reason})
	return s.done(w, r, c, err, "reissued")
}

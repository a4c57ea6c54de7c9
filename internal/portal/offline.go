package portal

import (
	"errors"
	"net/http"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
	"github.com/licentia/licentia/sdk"
)

// activateOffline answers an offline activation request file the customer
// uploads: the file's licence key must be one of the customer's licences
// (any other answers as an unknown key would); the activation then runs
// with the API's rules, audited as the customer, and its answer is offered
// as a file to carry back to the machine.
func (s *Server) activateOffline(w http.ResponseWriter, r *http.Request, c *customer) error {
	if err := web.ReadUpload(w, r); err != nil {
		return s.refused(w, r, c, err)
	}
	defer r.MultipartForm.RemoveAll()
	raw, err := web.RequestFile(r)
	if err != nil {
		return s.refused(w, r, c, err)
	}
	var in activation.OfflineActivate
	if err := web.DecodeFile(raw, &in); err != nil {
		return s.refused(w, r, c, err)
	}
	if in.LicenceKey != nil {
		if k, err := sdk.ParseLicenceKey(*in.LicenceKey); err == nil {
			_, err := s.ownLicence(r.Context(), c, k.LicenceIDString())
			if errors.Is(err, errNoLicence) {
				return s.refused(w, r, c, licentia.Errorf(licentia.CodeLicenceNotFound,
					"This request file is for a licence key that is not one of yours."))
			}
			if err != nil {
				return err
			}
		}
		// A key that does not parse is refused by the activation (400 or
		// 422), as the API refuses it.
	}
	res, err := s.act.ActivateOfflineFor(r.Context(), licentia.CustomerActor, in)
	if err != nil {
		return s.refused(w, r, c, err)
	}
	doc, err := res.AnswerFile()
	if err != nil {
		return err
	}
	web.WriteOfflineAnswer(w, doc)
	return nil
}

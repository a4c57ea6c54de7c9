package console

import (
	"net/http"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/web"
	"github.com/licentia/licentia/sdk"
)

// activateOffline answers an offline activation request file uploaded on
// the customer page. The buyer proves the purchase with the same fields as
// the lookup, counted in the same limit, and the file's licence key must be
// one of the purchase's; the activation then runs with the API's rules and
// its answer is offered as a file to carry back to the machine.
func (s *Server) activateOffline(w http.ResponseWriter, r *http.Request) error {
	if err := web.ReadUpload(w, r); err != nil {
		return err
	}
	defer r.MultipartForm.RemoveAll()
	ctx := r.Context()
	page, done, err := s.provePurchase(w, r)
	if done {
		return err
	}
	again := func(err error) error { return s.refusePurchase(w, r, "offline", page, err) }
	found := page.Purchase
	raw, err := web.RequestFile(r)
	if err != nil {
		return again(err)
	}
	var in activation.OfflineActivate
	if err := web.DecodeFile(raw, &in); err != nil {
		return again(err)
	}
	if in.LicenceKey != nil && !ofPurchase(found, *in.LicenceKey) {
		// Another purchase's key answers like an unknown one: the page
		// proves only this purchase.
		return again(licentia.Errorf(licentia.CodeLicenceNotFound, "This request file is for a licence key of another purchase."))
	}
	res, err := s.act.ActivateOffline(ctx, in)
	if err != nil {
		return again(err)
	}
	doc, err := res.AnswerFile()
	if err != nil {
		return err
	}
	web.WriteOfflineAnswer(w, doc)
	return nil
}

// ofPurchase reports whether key names one of p's licences. The key is
// only parsed here; the activation verifies its signature.
func ofPurchase(p *purchase.Purchase, key string) bool {
	k, err := sdk.ParseLicenceKey(key)
	if err != nil {
		return true // not a key at all: the activation refuses it (400 or 422)
	}
	for _, l := range p.Licences {
		if l.Licence.ID == k.LicenceIDString() {
			return true
		}
	}
	return false
}

package console

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/web"
	"github.com/licentia/licentia/sdk"
)

// MaxUpload is the largest offline request form read: a request file of
// at most sdk.MaxOfflineFile bytes, with room for the email address, the
// order id and the multipart framing.
const MaxUpload = sdk.MaxOfflineFile + 16384

// answerFile is the name the offline answer is offered under.
const answerFile = "licentia-offline-answer.json"

var (
	errUploadTooLarge = licentia.Errorf(licentia.CodePayloadTooLarge, "The request file is over 65,536 bytes.")
	errNoRequestFile  = &licentia.Error{Code: licentia.CodeValidationFailed, Message: "Choose the request file your application wrote.",
		Details: map[string]any{"issues": []licentia.Issue{{Path: "/request", Message: "is required"}}}}
)

// offlineAnswer is the answer of POST /v1/activations/offline, which the
// application imports; the download is the same document.
type offlineAnswer struct {
	Activation events.Activation `json:"activation"`
	Verdict    string            `json:"verdict"`
}

// activateOffline answers an offline activation request file uploaded on
// the customer page. The buyer proves the purchase with the same fields as
// the lookup, counted in the same limit, and the file's licence key must be
// one of the purchase's; the activation then runs with the API's rules and
// its answer is offered as a file to carry back to the machine.
func (s *Server) activateOffline(w http.ResponseWriter, r *http.Request) error {
	if err := readUpload(w, r); err != nil {
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
	raw, err := requestFile(r)
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
	out, err := json.Marshal(offlineAnswer{Activation: events.ActivationOf(res.Activation), Verdict: res.Verdict})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="`+answerFile+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(out, '\n'))
	return nil
}

// readUpload parses a multipart form of at most MaxUpload bytes, kept in
// memory.
func readUpload(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength > MaxUpload {
		return errUploadTooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxUpload)
	if err := r.ParseMultipartForm(MaxUpload); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return errUploadTooLarge
		}
		return errBadForm
	}
	return nil
}

// requestFile reads the uploaded request file, at most
// sdk.MaxOfflineFile bytes.
func requestFile(r *http.Request) ([]byte, error) {
	f, _, err := r.FormFile("request")
	if err != nil {
		return nil, errNoRequestFile
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, sdk.MaxOfflineFile+1))
	if err != nil {
		return nil, errBadForm
	}
	if len(raw) > sdk.MaxOfflineFile {
		return nil, errUploadTooLarge
	}
	return raw, nil
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

package web

import (
	"errors"
	"io"
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

// MaxUpload is the largest offline request form a page reads: a request
// file of at most sdk.MaxOfflineFile bytes, with room for the other fields
// and the multipart framing.
const MaxUpload = sdk.MaxOfflineFile + 16384

// OfflineAnswerFile is the name an offline activation's answer is offered
// under, to carry back to the machine.
const OfflineAnswerFile = "licentia-offline-answer.json"

var (
	// ErrUploadTooLarge answers a request file, or its form, over the
	// bounds.
	ErrUploadTooLarge = licentia.Errorf(licentia.CodePayloadTooLarge, "The request file is over 65,536 bytes.")
	// ErrNoRequestFile answers a form sent without its request file.
	ErrNoRequestFile = &licentia.Error{Code: licentia.CodeValidationFailed, Message: "Choose the request file your application wrote.",
		Details: map[string]any{"issues": []licentia.Issue{{Path: "/request", Message: "is required"}}}}
	// ErrUnreadableForm answers a form that could not be parsed.
	ErrUnreadableForm = licentia.Errorf(licentia.CodeValidationFailed, "The form could not be read.")
)

// ReadUpload parses a multipart form of at most MaxUpload bytes, kept in
// memory. The caller removes it (r.MultipartForm.RemoveAll) when done.
func ReadUpload(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength > MaxUpload {
		return ErrUploadTooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxUpload)
	if err := r.ParseMultipartForm(MaxUpload); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return ErrUploadTooLarge
		}
		return ErrUnreadableForm
	}
	return nil
}

// RequestFile reads the uploaded offline request file, the form's field
// "request", at most sdk.MaxOfflineFile bytes.
func RequestFile(r *http.Request) ([]byte, error) {
	f, _, err := r.FormFile("request")
	if err != nil {
		return nil, ErrNoRequestFile
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, sdk.MaxOfflineFile+1))
	if err != nil {
		return nil, ErrUnreadableForm
	}
	if len(raw) > sdk.MaxOfflineFile {
		return nil, ErrUploadTooLarge
	}
	return raw, nil
}

// WriteOfflineAnswer offers an offline activation's answer document as a
// file to download.
func WriteOfflineAnswer(w http.ResponseWriter, doc []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="`+OfflineAnswerFile+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc)
}

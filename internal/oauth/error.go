package oauth

import "net/http"

// Error codes of RFC 6749 (sections 4.1.2.1 and 5.2), RFC 7591 (3.2.2) and
// RFC 8707 (invalid_target).
const (
	ErrInvalidRequest          = "invalid_request"
	ErrInvalidClient           = "invalid_client"
	ErrInvalidGrant            = "invalid_grant"
	ErrUnsupportedGrantType    = "unsupported_grant_type"
	ErrUnsupportedResponseType = "unsupported_response_type"
	ErrAccessDenied            = "access_denied"
	ErrInvalidTarget           = "invalid_target"
	ErrInvalidRedirectURI      = "invalid_redirect_uri"
	ErrInvalidClientMetadata   = "invalid_client_metadata"
	ErrTemporarilyUnavailable  = "temporarily_unavailable"
	ErrServerError             = "server_error"
)

// Error is a refusal in the form RFC 6749 gives every OAuth error: a code
// clients match on and a description for people. The endpoints answer it
// as { "error", "error_description" }, never in the API's envelope.
type Error struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
	// Status is the HTTP status of the answer: 400 unless set.
	Status int `json:"-"`
	// RedirectTo is set on a refusal of an authorization request whose
	// client and redirect URI were trusted: the refusal goes back to the
	// client there, instead of being shown.
	RedirectTo string `json:"-"`
	// endedGrant and reason name the grant a reused code or refresh token
	// ended, for the warning logged once the end is committed.
	endedGrant, reason string
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

// Refusal is where a refused authorization request goes back to the
// client, or "" to show it to the person, and why: how the consent page
// tells the two apart without importing this package.
func (e *Error) Refusal() (redirectTo, description string) { return e.RedirectTo, e.Description }

func (e *Error) status() int {
	if e.Status == 0 {
		return http.StatusBadRequest
	}
	return e.Status
}

func refuse(code, description string) *Error { return &Error{Code: code, Description: description} }

// errServer answers a failure of ours; its cause is logged, never sent.
var errServer = &Error{Code: ErrServerError, Description: "Something went wrong on our side. Try again in a moment.",
	Status: http.StatusInternalServerError}

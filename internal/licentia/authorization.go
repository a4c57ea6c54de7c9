package licentia

import (
	"net/url"
	"strings"
)

// ChallengeS256 is the one PKCE code challenge method accepted (RFC 7636).
const ChallengeS256 = "S256"

// AuthorizationRequest is an authorization request whose every parameter
// was checked: what the consent page shows and its form carries.
type AuthorizationRequest struct {
	Client      *OAuthClient
	RedirectURI string
	// CodeChallenge is the PKCE S256 challenge.
	CodeChallenge string
	// Resource is the MCP server's address: the one the request named, or,
	// when it named none, the only resource there is.
	Resource string
	State    string
}

// Params are the request's parameters, as the consent form carries them
// and a sign-in returns to them.
func (r *AuthorizationRequest) Params() url.Values {
	v := url.Values{
		"response_type": {"code"}, "client_id": {r.Client.ID}, "redirect_uri": {r.RedirectURI},
		"code_challenge": {r.CodeChallenge}, "code_challenge_method": {ChallengeS256}, "resource": {r.Resource},
	}
	if r.State != "" {
		v.Set("state", r.State)
	}
	return v
}

// FormActionSource is the Content-Security-Policy source of the address
// the client is sent back to, which the consent page's form-action must
// allow: browsers hold a form's redirects to it too. It is the redirect
// URI's origin; CSP has no syntax for an IPv6 address, so for one (such as
// http://[::1]:port) it is the scheme alone.
func (r *AuthorizationRequest) FormActionSource() string {
	u, _ := url.Parse(r.RedirectURI)
	if strings.HasPrefix(u.Host, "[") {
		return u.Scheme + ":"
	}
	return u.Scheme + "://" + u.Host
}

// RedirectHost is the host the client is sent back to, which the consent
// page shows beside the name the client chose for itself.
func (r *AuthorizationRequest) RedirectHost() string {
	u, _ := url.Parse(r.RedirectURI)
	return u.Host
}

// ClientName is the client's registered name, or its redirect host when
// it registered none.
func (r *AuthorizationRequest) ClientName() string {
	if r.Client.Name != "" {
		return r.Client.Name
	}
	return r.RedirectHost()
}

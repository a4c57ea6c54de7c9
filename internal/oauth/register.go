package oauth

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Registration bounds: a client registers a few redirect URIs of ordinary
// length, and a name people can read on the consent page.
const (
	maxRegistrationBody = 16 << 10
	maxRedirectURIs     = 10
	maxRedirectURILen   = 2000
	maxClientNameLen    = 200
)

// Register registers a public client (RFC 7591). Metadata this server does
// not use is ignored, as the RFC asks; what it does use is checked: public
// clients only (token_endpoint_auth_method "none"), the code and
// refresh_token grants only, and redirect URIs by checkRedirectURI. The
// answer says what was registered, which may differ from what was asked.
func (s *Service) Register(ctx context.Context, in oauthex.ClientRegistrationMetadata) (*oauthex.ClientRegistrationResponse, error) {
	uris, err := checkRedirectURIs(in.RedirectURIs)
	if err != nil {
		return nil, err
	}
	if in.TokenEndpointAuthMethod != "" && in.TokenEndpointAuthMethod != authMethodNone {
		return nil, refuse(ErrInvalidClientMetadata, `token_endpoint_auth_method must be "none": only public clients, which prove themselves with PKCE, may register.`)
	}
	for _, g := range in.GrantTypes {
		if !slices.Contains(grantTypes, g) {
			return nil, refuse(ErrInvalidClientMetadata, fmt.Sprintf("grant_types may hold only %q and %q.", grantAuthorizationCode, grantRefreshToken))
		}
	}
	for _, t := range in.ResponseTypes {
		if t != "code" {
			return nil, refuse(ErrInvalidClientMetadata, `response_types may hold only "code".`)
		}
	}
	name := strings.TrimSpace(in.ClientName)
	if utf8.RuneCountInString(name) > maxClientNameLen || strings.ContainsFunc(name, unicode.IsControl) {
		return nil, refuse(ErrInvalidClientMetadata, fmt.Sprintf("client_name must be at most %d characters, none of them control characters.", maxClientNameLen))
	}
	c := &licentia.OAuthClient{ID: rand.Text(), Name: name, RedirectURIs: uris, CreatedAt: s.now()}
	if err := s.store.InTx(ctx, func(tx store.Tx) error { return tx.CreateOAuthClient(ctx, c) }); err != nil {
		return nil, fmt.Errorf("register client: %w", err)
	}
	return &oauthex.ClientRegistrationResponse{
		ClientRegistrationMetadata: oauthex.ClientRegistrationMetadata{
			RedirectURIs: c.RedirectURIs, TokenEndpointAuthMethod: authMethodNone, GrantTypes: grantTypes,
			ResponseTypes: responseTypes, ClientName: c.Name,
		},
		ClientID:         c.ID,
		ClientIDIssuedAt: c.CreatedAt,
	}, nil
}

// checkRedirectURIs checks a registration's redirect URIs and returns them
// without repeats.
func checkRedirectURIs(uris []string) ([]string, error) {
	if len(uris) == 0 {
		return nil, refuse(ErrInvalidRedirectURI, "redirect_uris is required: at least one redirect URI.")
	}
	if len(uris) > maxRedirectURIs {
		return nil, refuse(ErrInvalidRedirectURI, fmt.Sprintf("redirect_uris may hold at most %d URIs.", maxRedirectURIs))
	}
	var out []string
	for _, u := range uris {
		if problem := checkRedirectURI(u); problem != "" {
			return nil, refuse(ErrInvalidRedirectURI, fmt.Sprintf("The redirect URI %q %s.", truncate(u, 100), problem))
		}
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out, nil
}

// loopbackHosts are the hosts a redirect URI may name over plain http: the
// machine the client runs on (RFC 8252, section 7.3), where no one else can
// listen on the port.
var loopbackHosts = []string{"127.0.0.1", "::1", "localhost"}

// checkRedirectURI says what is wrong with a redirect URI, or "" when
// nothing is: it must be absolute, https, or http on a loopback host with
// any port, with no fragment and no user name. Redirect URIs are compared
// exactly, as written, so they may hold nothing two parsers could read
// differently: no space, control character or backslash.
func checkRedirectURI(raw string) string {
	if len(raw) > maxRedirectURILen {
		return fmt.Sprintf("is longer than %d bytes", maxRedirectURILen)
	}
	if raw == "" || strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '\\' }) {
		return "is empty or holds spaces, control characters or backslashes"
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme == "" || u.Opaque != "" || u.Host == "":
		return "is not an absolute URI"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "has a fragment"
	case u.User != nil:
		return "has a user name"
	case !isHostname(u.Hostname()):
		return "names a host that is neither a DNS name nor an IP address"
	case !isPort(u):
		return "has a port that is not a number from 1 to 65535"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && slices.Contains(loopbackHosts, u.Hostname()):
		return ""
	}
	return "must be https, or http on a loopback host (127.0.0.1, [::1] or localhost)"
}

// isHostname reports whether h is an IP address or a DNS name of letters,
// digits, hyphens and dots. URIs allow more in a host, but the host ends up
// in the consent page's Content-Security-Policy, where nothing else may
// slip in.
func isHostname(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	return h != "" && !strings.ContainsFunc(h, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.')
	})
}

// isPort reports whether u names no port, or one from 1 to 65535.
func isPort(u *url.URL) bool {
	if strings.HasSuffix(u.Host, ":") {
		return false
	}
	p := u.Port()
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// truncate shortens s to at most n bytes of whole characters, for a
// description quoting what a client sent.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

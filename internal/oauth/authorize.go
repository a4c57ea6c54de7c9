package oauth

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const challengeS256 = licentia.ChallengeS256

// authorizationParams are the parameters an authorization request may
// give, each at most once (RFC 6749, section 3.1).
var authorizationParams = []string{"client_id", "redirect_uri", "response_type", "code_challenge",
	"code_challenge_method", "resource", "state", "scope"}

// CheckAuthorization checks an authorization request. The client and the
// redirect URI are checked first: when either is unknown the refusal is an
// *Error to show the person, never a redirect, since the address could be
// anyone's. Every later refusal is an *Error whose RedirectTo sends it back
// to the client with the request's state. PKCE with S256 is required (plain
// is refused), and resource must be the MCP server's address (RFC 8707); a
// request without resource is bound to it all the same.
func (s *Service) CheckAuthorization(ctx context.Context, q url.Values) (*licentia.AuthorizationRequest, error) {
	clientID, redirect := q["client_id"], q["redirect_uri"]
	if len(clientID) != 1 || clientID[0] == "" {
		return nil, refuse(ErrInvalidRequest, "The request must name its client, once (client_id).")
	}
	c, err := s.store.OAuthClient(ctx, clientID[0])
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		return nil, refuse(ErrInvalidClient, "The client is not registered here. Start again from the AI assistant.")
	}
	if err != nil {
		return nil, fmt.Errorf("check authorization: %w", err)
	}
	if len(redirect) != 1 || !slices.Contains(c.RedirectURIs, redirect[0]) {
		return nil, refuse(ErrInvalidRequest, "The redirect URI is not one the client registered, so nothing was sent back to it.")
	}
	req := &licentia.AuthorizationRequest{Client: c, RedirectURI: redirect[0], State: q.Get("state"), Resource: s.Resource()}
	back := func(code, description string) error {
		e := refuse(code, description)
		e.RedirectTo = s.errorRedirect(req, e)
		return e
	}
	for _, p := range authorizationParams {
		if len(q[p]) > 1 {
			return nil, back(ErrInvalidRequest, p+" must be given at most once.")
		}
	}
	switch q.Get("response_type") {
	case "code":
	case "":
		return nil, back(ErrInvalidRequest, `response_type is required: "code".`)
	default:
		return nil, back(ErrUnsupportedResponseType, `Only response_type "code" is supported.`)
	}
	req.CodeChallenge = q.Get("code_challenge")
	if req.CodeChallenge == "" {
		return nil, back(ErrInvalidRequest, "PKCE is required: code_challenge with code_challenge_method S256.")
	}
	if q.Get("code_challenge_method") != challengeS256 {
		return nil, back(ErrInvalidRequest, "code_challenge_method must be S256; plain is not accepted.")
	}
	if !isChallenge(req.CodeChallenge) {
		return nil, back(ErrInvalidRequest, "code_challenge must be the S256 challenge: 43 base64url characters.")
	}
	if r := q.Get("resource"); r != "" && r != s.Resource() {
		return nil, back(ErrInvalidTarget, "resource must be "+s.Resource()+", the MCP server.")
	}
	return req, nil
}

// errorRedirect is where a refusal of req goes: the redirect URI with the
// error, the state and the issuer (RFC 9207), which tells the client which
// server answered.
func (s *Service) errorRedirect(req *licentia.AuthorizationRequest, e *Error) string {
	v := url.Values{"error": {e.Code}, "error_description": {e.Description}, "iss": {s.issuer}}
	if req.State != "" {
		v.Set("state", req.State)
	}
	return withQuery(req.RedirectURI, v)
}

// Deny answers a request the member refused on the consent page: where to
// send them, with error access_denied.
func (s *Service) Deny(req *licentia.AuthorizationRequest) string {
	return s.errorRedirect(req, refuse(ErrAccessDenied, "The member did not allow access."))
}

// Approve records a member's consent: a grant to the client, audited with
// the member as actor, and a code for it, bound to the request's client,
// redirect URI, challenge and resource, and exchangeable once within
// CodeLifetime. It returns where to send the member: the redirect URI with
// the code, the state and the issuer. A member removed meanwhile is
// refused.
func (s *Service) Approve(ctx context.Context, req *licentia.AuthorizationRequest, orgID, memberID string) (string, error) {
	now := s.now()
	code, hash := auth.NewToken()
	g := &licentia.Grant{ID: licentia.NewID(), OrgID: orgID, MemberID: memberID, ClientID: req.Client.ID,
		ClientName: req.ClientName(), CreatedAt: now}
	c := &licentia.AuthorizationCode{CodeHash: hash, ClientID: req.Client.ID, RedirectURI: req.RedirectURI,
		CodeChallenge: req.CodeChallenge, Resource: req.Resource, OrgID: orgID, MemberID: memberID, GrantID: g.ID,
		ExpiresAt: now.Add(CodeLifetime), CreatedAt: now}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.Member(ctx, orgID, memberID); licentia.ErrorCode(err) == licentia.CodeMemberNotFound {
			return licentia.Errorf(licentia.CodeForbidden, "You are no longer a member of this organization.")
		} else if err != nil {
			return err
		}
		if err := tx.CreateGrant(ctx, g); err != nil {
			return err
		}
		if err := tx.CreateAuthorizationCode(ctx, c); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditGrantCreated,
			Actor: licentia.MemberActor(memberID), At: now}, grantData(g, ""))
	})
	if err != nil {
		return "", fmt.Errorf("approve authorization: %w", err)
	}
	v := url.Values{"code": {code}, "iss": {s.issuer}}
	if req.State != "" {
		v.Set("state", req.State)
	}
	return withQuery(req.RedirectURI, v), nil
}

// grantData is the audit data of a grant's creation or end; reason says why
// the service ended it, when it did so on its own.
func grantData(g *licentia.Grant, reason string) map[string]any {
	d := map[string]any{"grant_id": g.ID, "member_id": g.MemberID, "client_name": g.ClientName}
	if g.ClientID != "" {
		d["client_id"] = g.ClientID
	}
	if reason != "" {
		d["reason"] = reason
	}
	return d
}

// withQuery adds v to a redirect URI's query. The registered URI is kept
// as written, its own query included: it was matched exactly.
func withQuery(uri string, v url.Values) string {
	u, _ := url.Parse(uri)
	sep := "?"
	switch {
	case u.RawQuery != "":
		sep = "&"
	case u.ForceQuery:
		sep = ""
	}
	return uri + sep + v.Encode()
}

// isChallenge reports whether s has the shape of an S256 challenge: the
// unpadded base64url of a SHA-256.
func isChallenge(s string) bool {
	if len(s) != 43 {
		return false
	}
	for _, r := range s {
		if !isURLSafe(r) || r == '.' || r == '~' {
			return false
		}
	}
	return true
}

// isURLSafe reports whether r is an unreserved character (RFC 3986), the
// alphabet of PKCE verifiers.
func isURLSafe(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' || r == '~'
}

package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Grant types.
const (
	grantAuthorizationCode = "authorization_code"
	grantRefreshToken      = "refresh_token"
)

// Why the service ends a grant on its own, as its audit entry says.
const (
	reasonCodeReused         = "authorization_code_reused"
	reasonRefreshTokenReused = "refresh_token_reused"
	reasonClientRevoked      = "client_revoked"
)

// TokenResponse is a successful token answer (RFC 6749, section 5.1).
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
}

// Token answers a token request of the client clientID: a public client,
// identified by its id alone, which proves itself with PKCE (for a code) or
// by holding its refresh token. Each parameter may be given once.
func (s *Service) Token(ctx context.Context, clientID string, form url.Values) (*TokenResponse, error) {
	if err := once(form); err != nil {
		return nil, err
	}
	if clientID == "" {
		return nil, &Error{Code: ErrInvalidClient, Description: "client_id is required.", Status: http.StatusUnauthorized}
	}
	c, err := s.store.OAuthClient(ctx, clientID)
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		return nil, &Error{Code: ErrInvalidClient, Description: "The client is not registered here.", Status: http.StatusUnauthorized}
	}
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	if r := form.Get("resource"); r != "" && r != s.Resource() {
		return nil, refuse(ErrInvalidTarget, "resource must be "+s.Resource()+", the MCP server.")
	}
	switch form.Get("grant_type") {
	case grantAuthorizationCode:
		return s.exchangeCode(ctx, c, form)
	case grantRefreshToken:
		return s.refresh(ctx, c, form)
	case "":
		return nil, refuse(ErrInvalidRequest, "grant_type is required.")
	}
	return nil, refuse(ErrUnsupportedGrantType, fmt.Sprintf("grant_type must be %q or %q.", grantAuthorizationCode, grantRefreshToken))
}

// once refuses a request giving a parameter more than once (RFC 6749,
// section 3.2).
func once(form url.Values) error {
	for k, vs := range form {
		if len(vs) > 1 {
			return refuse(ErrInvalidRequest, truncate(k, 40)+" must be given at most once.")
		}
	}
	return nil
}

// exchangeCode exchanges an authorization code for the first tokens of
// its grant. The code must be the client's, unexpired, sent with the
// redirect URI of its request and the verifier of its challenge; its
// member must still be on the team and its grant live. A code is
// exchanged once: one presented again, after a use or racing one, ends
// its grant and every token it gave (RFC 6749, section 4.1.2). A refused
// exchange for any other reason leaves the code as it was.
func (s *Service) exchangeCode(ctx context.Context, c *licentia.OAuthClient, form url.Values) (*TokenResponse, error) {
	code, redirect, verifier := form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier")
	if code == "" || redirect == "" || verifier == "" {
		return nil, refuse(ErrInvalidRequest, "code, redirect_uri and code_verifier are required.")
	}
	now := s.now()
	hash := auth.TokenHash(code)
	var out *TokenResponse
	var refusal *Error
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		out, refusal = nil, nil
		ac, err := tx.AuthorizationCode(ctx, hash)
		if licentia.ErrorCode(err) == licentia.CodeNotFound {
			refusal = refuse(ErrInvalidGrant, "The code is not valid.")
			return nil
		}
		if err != nil {
			return err
		}
		g := &ac.Grant
		switch {
		case ac.ClientID != c.ID:
			refusal = refuse(ErrInvalidGrant, "The code was given to another client.")
		case ac.UsedAt != nil:
			refusal, err = s.reused(ctx, tx, g, reasonCodeReused, now)
		case !now.Before(ac.ExpiresAt):
			refusal = refuse(ErrInvalidGrant, "The code expired; codes last 10 minutes.")
		case ac.RedirectURI != redirect:
			refusal = refuse(ErrInvalidGrant, "redirect_uri is not the authorization request's.")
		case !verifierMatches(verifier, ac.CodeChallenge):
			refusal = refuse(ErrInvalidGrant, "code_verifier does not match the code_challenge.")
		}
		if refusal != nil || err != nil {
			return err
		}
		out, refusal, err = s.redeem(ctx, tx, g, func() (bool, error) { return tx.UseAuthorizationCode(ctx, hash, now) }, reasonCodeReused, now)
		return err
	})
	return s.tokenOutcome(ctx, out, refusal, err, c.ID)
}

// refresh exchanges a refresh token for a new access and refresh token of
// the same grant. The old refresh token is used up; one presented again,
// after its use or racing it, ends the whole grant (refresh token
// rotation, OAuth 2.1 section 4.3.1), so a stolen token is good for one
// exchange at most, and only until its rightful holder comes back.
func (s *Service) refresh(ctx context.Context, c *licentia.OAuthClient, form url.Values) (*TokenResponse, error) {
	rt := form.Get("refresh_token")
	if rt == "" {
		return nil, refuse(ErrInvalidRequest, "refresh_token is required.")
	}
	now := s.now()
	hash := auth.TokenHash(rt)
	var out *TokenResponse
	var refusal *Error
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		out, refusal = nil, nil
		t, err := tx.AssistantToken(ctx, hash)
		if licentia.ErrorCode(err) == licentia.CodeNotFound || (err == nil && t.Kind != licentia.TokenRefresh) {
			refusal = refuse(ErrInvalidGrant, "The refresh token is not valid.")
			return nil
		}
		if err != nil {
			return err
		}
		g := &t.Grant
		switch {
		case g.ClientID != c.ID:
			refusal = refuse(ErrInvalidGrant, "The refresh token was given to another client.")
		case g.RevokedAt != nil:
			refusal = refuse(ErrInvalidGrant, "The access was ended; ask the member to allow it again.")
		case t.UsedAt != nil:
			refusal, err = s.reused(ctx, tx, g, reasonRefreshTokenReused, now)
		case !now.Before(t.ExpiresAt):
			refusal = refuse(ErrInvalidGrant, "The refresh token expired; ask the member to allow access again.")
		}
		if refusal != nil || err != nil {
			return err
		}
		out, refusal, err = s.redeem(ctx, tx, g, func() (bool, error) { return tx.UseAssistantToken(ctx, hash, now) }, reasonRefreshTokenReused, now)
		return err
	})
	return s.tokenOutcome(ctx, out, refusal, err, c.ID)
}

// redeem uses up a code or refresh token (use reports whether it was still
// unused) and issues the grant's next tokens. One used already, even by a
// request racing this one, ends the grant; a grant whose member may no
// longer use it is refused.
func (s *Service) redeem(ctx context.Context, tx store.Tx, g *licentia.Grant, use func() (bool, error), reason string, now time.Time) (*TokenResponse, *Error, error) {
	used, err := use()
	if err != nil {
		return nil, nil, err
	}
	if !used {
		refusal, err := s.reused(ctx, tx, g, reason, now)
		return nil, refusal, err
	}
	if refusal, err := s.stillAllowed(ctx, tx, g); refusal != nil || err != nil {
		return nil, refusal, err
	}
	out, err := issue(ctx, tx, g, now)
	return out, nil, err
}

// tokenOutcome returns a token exchange's outcome, logging a refusal by
// its code and client alone: never a token, code or verifier.
func (s *Service) tokenOutcome(ctx context.Context, out *TokenResponse, refusal *Error, err error, clientID string) (*TokenResponse, error) {
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	if refusal != nil {
		s.log.InfoContext(ctx, "oauth token refused", "request_id", requestID(ctx), "client_id", clientID,
			"error_code", refusal.Code)
		if refusal.endedGrant != "" {
			s.log.WarnContext(ctx, "oauth grant ended: a used code or refresh token was presented again",
				"request_id", requestID(ctx), "client_id", clientID, "grant_id", refusal.endedGrant, "reason", refusal.reason)
		}
		return nil, refusal
	}
	return out, nil
}

// stillAllowed refuses a grant that was ended, or whose member is no
// longer on the team: removal ends a member's grants, and this holds even
// for a removal racing the exchange.
func (s *Service) stillAllowed(ctx context.Context, tx store.Tx, g *licentia.Grant) (*Error, error) {
	if g.RevokedAt != nil {
		return refuse(ErrInvalidGrant, "The access was ended; ask the member to allow it again."), nil
	}
	_, err := tx.Member(ctx, g.OrgID, g.MemberID)
	if licentia.ErrorCode(err) == licentia.CodeMemberNotFound {
		return refuse(ErrInvalidGrant, "The member is no longer on the team."), nil
	}
	return nil, err
}

// reused ends a grant whose code or refresh token was presented again,
// audited with the system as actor, and returns the refusal to answer.
func (s *Service) reused(ctx context.Context, tx store.Tx, g *licentia.Grant, reason string, now time.Time) (*Error, error) {
	if err := endGrant(ctx, tx, g, licentia.Actor{Type: licentia.ActorSystem}, reason, now); err != nil {
		return nil, err
	}
	e := refuse(ErrInvalidGrant, "This was used before, so the access it belongs to was ended. Ask the member to allow it again.")
	e.endedGrant, e.reason = g.ID, reason
	return e, nil
}

// endGrant revokes a grant and, when that changed it, audits the end.
func endGrant(ctx context.Context, tx store.Tx, g *licentia.Grant, actor licentia.Actor, reason string, now time.Time) error {
	if g.RevokedAt != nil {
		return nil
	}
	changed, err := tx.RevokeGrant(ctx, g.OrgID, g.MemberID, g.ID, now)
	if err != nil || !changed {
		return err
	}
	return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: g.OrgID, Action: licentia.AuditGrantRevoked, Actor: actor, At: now},
		grantData(g, reason))
}

// issue writes a new access and refresh token of grant g; only their
// hashes are kept.
func issue(ctx context.Context, tx store.Tx, g *licentia.Grant, now time.Time) (*TokenResponse, error) {
	access, accessHash := auth.NewAssistantToken(licentia.TokenAccess)
	refresh, refreshHash := auth.NewAssistantToken(licentia.TokenRefresh)
	for _, t := range []*licentia.AssistantToken{
		{TokenHash: accessHash, GrantID: g.ID, Kind: licentia.TokenAccess, ExpiresAt: now.Add(auth.AccessTokenLifetime), CreatedAt: now},
		{TokenHash: refreshHash, GrantID: g.ID, Kind: licentia.TokenRefresh, ExpiresAt: now.Add(auth.RefreshTokenLifetime), CreatedAt: now},
	} {
		if err := tx.CreateAssistantToken(ctx, t); err != nil {
			return nil, err
		}
	}
	return &TokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(auth.AccessTokenLifetime / time.Second),
		RefreshToken: refresh}, nil
}

// verifierMatches reports whether verifier is a PKCE code verifier (43 to
// 128 unreserved characters) whose S256 is challenge (RFC 7636, section
// 4.6), compared in constant time.
func verifierMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	for _, r := range verifier {
		if !isURLSafe(r) {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Caller is an identified caller of the administration routes: an API key,
// or an AI assistant acting as a member.
type Caller struct {
	OrgID  string
	Actor  licentia.Actor
	KeyID  string
	Prefix string
	Scopes []licentia.Scope
	// MemberID and Role are set for a member, Role as it is at this
	// request.
	MemberID string
	Role     licentia.Role
	// Assistant is set for an AI assistant; GrantID is its grant.
	Assistant bool
	GrantID   string
}

// IsMember reports whether the caller acts as a member rather than a key.
func (c *Caller) IsMember() bool { return c.MemberID != "" }

// RateSubject is what the caller's requests are counted against: the key,
// or the member for an assistant.
func (c *Caller) RateSubject() string {
	if c.IsMember() {
		return "member:" + c.MemberID
	}
	return "key:" + c.KeyID
}

// HasScope reports whether the caller holds s.
func (c *Caller) HasScope(s licentia.Scope) bool {
	return slices.Contains(c.Scopes, s)
}

// Authenticator identifies callers by API key or assistant access token.
// Every request reads the key's or token's row, so a new one works at once
// and a revoked or expired one is refused at once, on every process: no
// cache can keep a revoked key working.
type Authenticator struct {
	store store.Store
	clock clock.Clock
}

// NewAuthenticator returns an Authenticator reading keys from st, where it
// also writes when each key and grant was last used.
func NewAuthenticator(st store.Store, clk clock.Clock) *Authenticator {
	return &Authenticator{store: st, clock: clk}
}

var errUnauthorized = licentia.Errorf(licentia.CodeUnauthorized, "A valid API key or access token is required.")

// Authenticate identifies the caller from an Authorization header value. A
// missing, malformed, unknown, wrong, revoked or expired key answers 401
// unauthorized, all alike.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (*Caller, error) {
	// The scheme name is case-insensitive (RFC 9110).
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, errUnauthorized
	}
	if isAccessToken(token) {
		return a.authenticateAssistant(ctx, token)
	}
	prefix, ok := ParseKey(token)
	if !ok {
		return nil, errUnauthorized
	}
	k, err := a.store.APIKeyByPrefix(ctx, prefix)
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, fmt.Errorf("identify caller %s: %w", prefix, err)
	}
	now := a.clock.Now()
	if !HashMatches(token, k.Hash) || !k.IsLive(now) {
		return nil, errUnauthorized
	}
	a.noteUse(ctx, "key", k.ID, k.LastUsedAt, now)
	return &Caller{OrgID: k.OrgID, Actor: licentia.APIKeyActor(k.ID), KeyID: k.ID, Prefix: k.Prefix, Scopes: k.Scopes}, nil
}

package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// Assistant tokens are opaque: a marker saying what they are, then 256
// random bits. Only their SHA-256 is stored.
const (
	accessMarker  = "licentia_oat_"
	refreshMarker = "licentia_ort_"

	// AccessTokenLifetime and RefreshTokenLifetime are fixed by the
	// contract's decisions: access one hour, refresh 30 days.
	AccessTokenLifetime  = time.Hour
	RefreshTokenLifetime = 30 * 24 * time.Hour
)

// NewAssistantToken returns a new token of kind and its stored hash.
func NewAssistantToken(kind licentia.TokenKind) (token string, hash []byte) {
	marker := accessMarker
	if kind == licentia.TokenRefresh {
		marker = refreshMarker
	}
	t := marker + randomString(base62Chars, secretLen)
	return t, TokenHash(t)
}

// isAccessToken reports whether s has the shape of an access token.
func isAccessToken(s string) bool {
	rest, ok := strings.CutPrefix(s, accessMarker)
	return ok && len(rest) == secretLen && only(rest, base62Chars)
}

// assistantGuardRails are the scopes an AI assistant never holds, whatever
// the member's role.
var assistantGuardRails = []licentia.Scope{licentia.ScopeLicencesAnonymise, licentia.ScopeProductsWrite}

// AssistantScopes returns the scopes an AI assistant acting as a member
// with role holds.
func AssistantScopes(role licentia.Role) []licentia.Scope {
	out := role.Scopes()
	kept := out[:0]
	for _, s := range out {
		if !slices.Contains(assistantGuardRails, s) {
			kept = append(kept, s)
		}
	}
	return kept
}

// AsAssistant returns the caller held to the assistant guard-rails: an API
// key used through the MCP server acts for an AI assistant, so it loses
// the scopes an assistant never holds and is refused what an assistant is
// refused, while staying the key (its audit actor and rate limit).
func (c *Caller) AsAssistant() *Caller {
	out := *c
	out.Assistant = true
	out.Scopes = slices.DeleteFunc(slices.Clone(c.Scopes), func(s licentia.Scope) bool {
		return slices.Contains(assistantGuardRails, s)
	})
	return &out
}

// authenticateAssistant identifies an AI assistant by its access token:
// the token must be unexpired, its grant not revoked, and its member still
// on the team. The member's role is read now, so a demotion or a removal
// holds from the next request, on every process.
func (a *Authenticator) authenticateAssistant(ctx context.Context, token string) (*Caller, error) {
	t, err := a.store.AssistantToken(ctx, TokenHash(token))
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, fmt.Errorf("identify assistant: %w", err)
	}
	if t.Kind != licentia.TokenAccess || !a.clock.Now().Before(t.ExpiresAt) || t.Grant.RevokedAt != nil {
		return nil, errUnauthorized
	}
	m, err := a.store.Member(ctx, t.Grant.OrgID, t.Grant.MemberID)
	if licentia.ErrorCode(err) == licentia.CodeMemberNotFound {
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, fmt.Errorf("identify assistant: %w", err)
	}
	a.noteUse(ctx, "grant", t.Grant.ID, t.Grant.LastUsedAt, a.clock.Now())
	return &Caller{OrgID: m.OrgID, Actor: licentia.MemberActor(m.ID), MemberID: m.ID, Role: m.Role,
		Assistant: true, GrantID: t.Grant.ID, Scopes: AssistantScopes(m.Role)}, nil
}

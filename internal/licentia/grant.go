package licentia

import "time"

// Grant is a member's permission for an AI assistant to act as them: made
// on the console's consent page, or by `licentia assistant token`. Ending
// it ends every token it gave.
type Grant struct {
	ID       string
	OrgID    string
	MemberID string
	// ClientID is the registered client the grant was given to; "" for a
	// grant made by the operator's command.
	ClientID   string
	ClientName string
	CreatedAt  time.Time
	RevokedAt  *time.Time
	// LastUsedAt is when an access token of the grant last authenticated
	// a request, to the minute (LastUseEvery); nil when never.
	LastUsedAt *time.Time
}

// TokenKind says what an assistant token is for.
type TokenKind string

// Token kinds.
const (
	TokenAccess  TokenKind = "access"
	TokenRefresh TokenKind = "refresh"
)

// AssistantToken is an opaque token of a grant; only its hash is kept.
type AssistantToken struct {
	TokenHash []byte
	GrantID   string
	Kind      TokenKind
	ExpiresAt time.Time
	// UsedAt is set on a refresh token once it was exchanged.
	UsedAt    *time.Time
	CreatedAt time.Time
	// Grant is the token's grant, read with it.
	Grant Grant
}

// OAuthClient is a client registered through dynamic client registration
// (RFC 7591): always public, with no secret; it proves itself with PKCE.
type OAuthClient struct {
	ID           string
	Name         string
	RedirectURIs []string
	CreatedAt    time.Time
}

// AuthorizationCode is a code the consent page gave a client, bound to
// everything the token request must repeat; only its hash is kept, and it
// is exchanged once.
type AuthorizationCode struct {
	CodeHash    []byte
	ClientID    string
	RedirectURI string
	// CodeChallenge is the PKCE S256 challenge of the authorization
	// request.
	CodeChallenge string
	Resource      string
	OrgID         string
	MemberID      string
	// GrantID is the grant the member made on the consent page; the code's
	// tokens belong to it.
	GrantID   string
	ExpiresAt time.Time
	UsedAt    *time.Time
	CreatedAt time.Time
	// Grant is the code's grant, read with it.
	Grant Grant
}

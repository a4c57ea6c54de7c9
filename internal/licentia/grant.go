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

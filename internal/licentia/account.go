package licentia

import "time"

// Account is a person who signs in to the console. A person who is a member
// of several organizations under one address has one account; membership
// is by address, compared with ASCII letters folded.
type Account struct {
	ID    string
	Email string
	// PasswordHash is an argon2id PHC string, "" until a setup or
	// invitation link sets it.
	PasswordHash string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Membership is a member record with the organization it belongs to, for
// a person switching between organizations.
type Membership struct {
	Member
	OrgName string
	OrgSlug string
}

// Session is a console session. Its token is given to the browser once, in
// a cookie; only its hash is kept.
type Session struct {
	ID        string
	TokenHash []byte
	AccountID string
	// OrgID is the organization the session looks at.
	OrgID      string
	CreatedAt  time.Time
	LastSeenAt time.Time
	// ExpiresAt is the absolute end, seven days after sign-in.
	ExpiresAt time.Time
}

// LoginLink is a one-time link that sets a member's password: the setup
// link of a new organization's owner, or one the operator makes.
type LoginLink struct {
	ID        string
	OrgID     string
	MemberID  string
	TokenHash []byte
	ExpiresAt time.Time
	UsedAt    *time.Time
	CreatedAt time.Time
}

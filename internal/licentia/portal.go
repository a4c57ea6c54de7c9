package licentia

import "time"

// MailPortalSignIn mails a customer a one-time link that signs them in to
// an organization's customer portal.
const MailPortalSignIn MailKind = "portal_sign_in"

// PortalLink is a one-time sign-in link to the customer portal, mailed to
// Email. Only its token's hash is kept; the token itself is derived from
// the link's id when the mail is sent (see signing.Keyring.LinkToken), so
// neither the row nor the mail queue holds it. The mail that carries the
// link has the link's id.
type PortalLink struct {
	ID        string
	OrgID     string
	TokenHash []byte
	// Email is the address the link was asked for, in lower case: the
	// session it opens sees that address's licences.
	Email     string
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is set when the link signed in; a link signs in once.
	UsedAt *time.Time
}

// PortalSession is a customer signed in to one organization's portal, as
// one email address; only its token's hash is kept.
type PortalSession struct {
	ID        string
	OrgID     string
	TokenHash []byte
	// Email is the address the session sees the licences of, in lower
	// case.
	Email     string
	CreatedAt time.Time
	ExpiresAt time.Time
}

package licentia

import "time"

// MailKind says what a mail to a customer is about, and so which template
// renders it.
type MailKind string

// Mail kinds.
const (
	// MailKey hands a customer the keys of their licences.
	MailKey MailKind = "key"
	// MailPassword mails a member who forgot their console password a
	// one-time link that sets a new one; the mail's id is the link's.
	MailPassword MailKind = "console_password"
)

// MailStatus is where a mail stands: queued until it is handed to the
// mail server or its attempts are spent.
type MailStatus string

// Mail statuses.
const (
	MailQueued MailStatus = "queued"
	MailSent   MailStatus = "sent"
	MailFailed MailStatus = "failed"
)

// Why a mail failed, as its row keeps it: never an address or a key.
const (
	// MailFailureNotHandedOver: the mail server (or the outbox) did not
	// take the mail; the attempt is made again while attempts remain.
	MailFailureNotHandedOver = "not_handed_over"
	// MailFailureAnonymised: the licences were anonymised before the mail
	// went out, so there is nobody left to mail.
	MailFailureAnonymised = "licence_anonymised"
	// MailFailureNotInForce: every licence was revoked or expired before
	// the mail went out; a key that no longer works is not mailed.
	MailFailureNotInForce = "licence_not_in_force"
	// MailFailureAddress: the address is not one mail can be sent to.
	MailFailureAddress = "address_not_mailable"
	// MailFailureRender: the mail could not be put together (a product
	// that can no longer sign, say).
	MailFailureRender = "not_rendered"
	// MailFailureLinkExpired: a portal sign-in link expired or was used
	// before its mail went out; a link that no longer signs in is not
	// mailed.
	MailFailureLinkExpired = "link_expired"
)

// Mail is one mail to a customer, queued in the transaction of the change
// that causes it and sent by a worker. It holds references, never the
// recipient's address or a licence key: both are read from the licences
// when it is sent, so a licence anonymised meanwhile is never mailed.
type Mail struct {
	ID    string
	OrgID string
	Kind  MailKind
	// LicenceIDs are the licences the mail is about, in the order it
	// lists them.
	LicenceIDs    []string
	Status        MailStatus
	Attempts      int
	LastAttemptAt *time.Time
	// NextAttemptAt is when a queued mail is due; nil once it is sent or
	// failed.
	NextAttemptAt *time.Time
	FailureReason *string
	CreatedAt     time.Time
	// LeasedUntil is set on a claimed mail: no other worker takes it
	// before then. Recording the attempt checks it is still the claim's.
	LeasedUntil *time.Time
}

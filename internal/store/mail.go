package store

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// MailReader reads the mail queue.
type MailReader interface {
	// Mail reads one mail; another organization's answers not_found like a
	// missing one.
	Mail(ctx context.Context, orgID, id string) (*licentia.Mail, error)
	// CountLicenceMails counts the mails of a kind that list a licence,
	// created at or after since, whatever their status.
	CountLicenceMails(ctx context.Context, orgID, licenceID string, kind licentia.MailKind, since time.Time) (int64, error)
}

// MailWriter changes the mail queue and what mails are rendered from.
type MailWriter interface {
	// SetBranding replaces an organization's branding; a missing one
	// answers not_found.
	SetBranding(ctx context.Context, orgID string, b licentia.Branding) error
	// CreateMail queues a mail with the licences it lists.
	CreateMail(ctx context.Context, m *licentia.Mail) error
	// ClaimMails leases up to limit queued mails due at now, earliest
	// first (id breaking ties), until leaseUntil, so no other worker, in
	// this process or another, sends them meanwhile.
	ClaimMails(ctx context.Context, now, leaseUntil time.Time, limit int) ([]licentia.Mail, error)
	// FinishMail records an attempt's outcome (status, attempts, times,
	// failure reason) and ends the lease. It reports false, writing
	// nothing, when the mail's lease (LeasedUntil) has passed to another
	// claim.
	FinishMail(ctx context.Context, m *licentia.Mail) (bool, error)
}

package admin

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Key-mail rules that are ours: a licence gets at most KeyMailsPerDay key
// mails in any 24 hours, counted from the mail rows, so a key mail sent on
// issue or with an order counts.
const (
	KeyMailsPerDay = 5
	keyMailWindow  = 24 * time.Hour
)

// SendKeyRequest is the body of POST /v1/admin/licences/{id}/send-key: an
// empty body or {}.
type SendKeyRequest struct {
	licentia.Decoded
}

// Validate reports the problems found while reading the request.
func (in *SendKeyRequest) Validate() licentia.Issues {
	return append(slices.Clone(in.Before), licentia.CheckFields(in)...)
}

// SendKey queues a mail of a licence's key to its email and returns it, in
// the order of checks: 400, 404 licence_not_found, 409
// licence_anonymised, 409 conflict for a licence revoked or expired (its
// key no longer works) or whose email mail cannot be sent to, then 429
// rate_limited past KeyMailsPerDay, a daily cap without Retry-After. The
// mail and the licence's licence.key_mailed audit entry commit together.
func (s *Service) SendKey(ctx context.Context, actor licentia.Actor, orgID, id string, in SendKeyRequest) (*licentia.Mail, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	now := s.now()
	var m *licentia.Mail
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		// The licence's lock holds the count and the new row together, so
		// two sends racing never pass the limit.
		l, err := tx.LockLicence(ctx, orgID, id)
		if err != nil {
			return err
		}
		if err := checkKeyMail(l, now); err != nil {
			return err
		}
		n, err := tx.CountLicenceMails(ctx, orgID, id, licentia.MailKey, now.Add(-keyMailWindow))
		if err != nil {
			return err
		}
		if n >= KeyMailsPerDay {
			return licentia.Errorf(licentia.CodeRateLimited, "A licence's key is mailed at most %d times in 24 hours.", KeyMailsPerDay)
		}
		m, err = queueKeyMail(ctx, tx, actor, []*licentia.Licence{l}, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("send key: %w", err)
	}
	return m, nil
}

// checkKeyMail refuses a key mail of a licence that has nobody to mail or
// whose key no longer works.
func checkKeyMail(l *licentia.Licence, now time.Time) error {
	if l.AnonymisedAt != nil {
		return licentia.Errorf(licentia.CodeLicenceAnonymised, "The licence was anonymised; there is nobody to mail.")
	}
	if !l.DerivedState(now).IsInForce() {
		return licentia.Errorf(licentia.CodeConflict, "The licence is %s; its key no longer works and is not mailed.", l.DerivedState(now))
	}
	if licentia.CheckMailableEmail(l.Email) != "" {
		return licentia.Errorf(licentia.CodeConflict, "The licence's email is not an address mail can be sent to.")
	}
	return nil
}

// queueKeyMail queues one key mail listing ls, all of one organization
// and one email, in tx, with a licence.key_mailed audit entry on each
// licence. The row names the licences only: the address and the keys are
// read when the mail is sent.
func queueKeyMail(ctx context.Context, tx store.Tx, actor licentia.Actor, ls []*licentia.Licence, now time.Time) (*licentia.Mail, error) {
	m := &licentia.Mail{ID: licentia.NewID(), OrgID: ls[0].OrgID, Kind: licentia.MailKey, Status: licentia.MailQueued,
		NextAttemptAt: &now, CreatedAt: now}
	for _, l := range ls {
		m.LicenceIDs = append(m.LicenceIDs, l.ID)
	}
	if err := tx.CreateMail(ctx, m); err != nil {
		return nil, err
	}
	for _, l := range ls {
		e := licentia.AuditEntry{OrgID: l.OrgID, LicenceID: &l.ID, Action: licentia.AuditLicenceKeyMailed, Actor: actor, At: now}
		if err := events.Audit(ctx, tx, e, map[string]any{"licence_id": l.ID, "mail_id": m.ID}); err != nil {
			return nil, err
		}
	}
	return m, nil
}

package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const mailColumns = `id, org_id, kind, status, attempts, last_attempt_at, next_attempt_at, failure_reason, created_at`

func mailNotFound() error { return store.NotFound(licentia.CodeNotFound, "Mail") }

func scanMail(row interface{ Scan(...any) error }) (*licentia.Mail, error) {
	var m licentia.Mail
	var created int64
	var last, next *int64
	err := row.Scan(&m.ID, &m.OrgID, &m.Kind, &m.Status, &m.Attempts, &last, &next, &m.FailureReason, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mailNotFound()
	}
	if err != nil {
		return nil, err
	}
	m.LastAttemptAt, m.NextAttemptAt, m.CreatedAt = store.FromMillisPtr(last), store.FromMillisPtr(next), store.FromMillis(created)
	return &m, nil
}

// mailLicences reads the licence ids of each mail, in its order, with one
// statement of a fixed text per mail.
func (r reader) mailLicences(ctx context.Context, ms []licentia.Mail) error {
	for i := range ms {
		rows, err := r.q.QueryContext(ctx, `SELECT licence_id FROM mail_licences WHERE mail_id = ? ORDER BY position`, ms[i].ID)
		if err != nil {
			return err
		}
		ids := []string{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		ms[i].LicenceIDs = ids
	}
	return nil
}

func (r reader) Mail(ctx context.Context, orgID, id string) (*licentia.Mail, error) {
	m, err := scanMail(r.q.QueryRowContext(ctx, `SELECT `+mailColumns+` FROM mails WHERE org_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read mail: %w", err)
	}
	one := []licentia.Mail{*m}
	if err := r.mailLicences(ctx, one); err != nil {
		return nil, fmt.Errorf("read mail: %w", err)
	}
	return &one[0], nil
}

func (r reader) CountLicenceMails(ctx context.Context, orgID, licenceID string, kind licentia.MailKind, since time.Time) (int64, error) {
	var n int64
	err := r.q.QueryRowContext(ctx, `SELECT count(*) FROM mail_licences
		WHERE licence_id = ? AND kind = ? AND created_at >= ? AND org_id = ?`, licenceID, kind, store.Millis(since), orgID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count licence mails: %w", err)
	}
	return n, nil
}

func (t *tx) CreateMail(ctx context.Context, m *licentia.Mail) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO mails (`+mailColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.OrgID, m.Kind, m.Status, m.Attempts, store.MillisPtr(m.LastAttemptAt), store.MillisPtr(m.NextAttemptAt),
		m.FailureReason, store.Millis(m.CreatedAt))
	if err != nil {
		return fmt.Errorf("create mail: %w", err)
	}
	for i, id := range m.LicenceIDs {
		_, err := t.tx.ExecContext(ctx, `INSERT INTO mail_licences (mail_id, position, org_id, licence_id, kind, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, m.ID, i, m.OrgID, id, m.Kind, store.Millis(m.CreatedAt))
		if err != nil {
			return fmt.Errorf("create mail: %w", err)
		}
	}
	return nil
}

// ClaimMails is one statement, as ClaimDeliveries: SQLite's one writer
// runs claims one after the other, so no row locks are needed.
func (t *tx) ClaimMails(ctx context.Context, now, leaseUntil time.Time, limit int) ([]licentia.Mail, error) {
	rows, err := t.tx.QueryContext(ctx, `UPDATE mails SET leased_until = ? WHERE id IN (
		SELECT id FROM mails
		WHERE status = 'queued' AND next_attempt_at <= ? AND (leased_until IS NULL OR leased_until <= ?)
		ORDER BY next_attempt_at, id LIMIT ?)
		RETURNING `+mailColumns, store.Millis(leaseUntil), store.Millis(now), store.Millis(now), limit)
	if err != nil {
		return nil, fmt.Errorf("claim mails: %w", err)
	}
	var ms []licentia.Mail
	for rows.Next() {
		m, err := scanMail(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("claim mails: %w", err)
		}
		ms = append(ms, *m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claim mails: %w", err)
	}
	lease := store.FromMillis(store.Millis(leaseUntil))
	for i := range ms {
		ms[i].LeasedUntil = &lease
	}
	slices.SortFunc(ms, func(a, b licentia.Mail) int {
		return cmp.Or(a.NextAttemptAt.Compare(*b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	if err := t.mailLicences(ctx, ms); err != nil {
		return nil, fmt.Errorf("claim mails: %w", err)
	}
	return ms, nil
}

func (t *tx) FinishMail(ctx context.Context, m *licentia.Mail) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE mails SET status = ?, attempts = ?, last_attempt_at = ?, next_attempt_at = ?,
		failure_reason = ?, leased_until = NULL WHERE id = ? AND leased_until = ?`,
		m.Status, m.Attempts, store.MillisPtr(m.LastAttemptAt), store.MillisPtr(m.NextAttemptAt), m.FailureReason, m.ID,
		store.MillisPtr(m.LeasedUntil))
	if err != nil {
		return false, fmt.Errorf("finish mail: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

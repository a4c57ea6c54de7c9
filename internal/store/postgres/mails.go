package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const mailColumns = `id, org_id, kind, status, attempts, last_attempt_at, next_attempt_at, failure_reason, created_at`

func mailNotFound() error { return store.NotFound(licentia.CodeNotFound, "Mail") }

func scanMail(row pgx.Row) (*licentia.Mail, error) {
	var m licentia.Mail
	err := row.Scan(&m.ID, &m.OrgID, &m.Kind, &m.Status, &m.Attempts, &m.LastAttemptAt, &m.NextAttemptAt, &m.FailureReason, &m.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, mailNotFound()
	}
	if err != nil {
		return nil, err
	}
	m.LastAttemptAt, m.NextAttemptAt, m.CreatedAt = utcPtr(m.LastAttemptAt), utcPtr(m.NextAttemptAt), m.CreatedAt.UTC()
	return &m, nil
}

// mailLicences reads the licence ids of every mail of ms in one query.
func (r reader) mailLicences(ctx context.Context, ms []licentia.Mail) error {
	if len(ms) == 0 {
		return nil
	}
	ids := make([]string, len(ms))
	at := make(map[string]int, len(ms))
	for i := range ms {
		ids[i], at[ms[i].ID] = ms[i].ID, i
		ms[i].LicenceIDs = []string{}
	}
	rows, err := r.q.Query(ctx, `SELECT mail_id, licence_id FROM mail_licences WHERE mail_id = ANY($1::uuid[])
		ORDER BY mail_id, position`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var mailID, licenceID string
		if err := rows.Scan(&mailID, &licenceID); err != nil {
			return err
		}
		i := at[mailID]
		ms[i].LicenceIDs = append(ms[i].LicenceIDs, licenceID)
	}
	return rows.Err()
}

func (r reader) Mail(ctx context.Context, orgID, id string) (*licentia.Mail, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("read mail: %w", mailNotFound())
	}
	m, err := scanMail(r.q.QueryRow(ctx, `SELECT `+mailColumns+` FROM mails WHERE org_id = $1 AND id = $2`, orgID, id))
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
	if !isID(orgID) || !isID(licenceID) {
		return 0, nil
	}
	var n int64
	err := r.q.QueryRow(ctx, `SELECT count(*) FROM mail_licences
		WHERE licence_id = $1 AND kind = $2 AND created_at >= $3 AND org_id = $4`, licenceID, string(kind), ms(since), orgID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count licence mails: %w", err)
	}
	return n, nil
}

// CreateMail sends the mail and its licences as one batch, one round trip.
func (t *tx) CreateMail(ctx context.Context, m *licentia.Mail) error {
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO mails (`+mailColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		m.ID, m.OrgID, string(m.Kind), string(m.Status), m.Attempts, msPtr(m.LastAttemptAt), msPtr(m.NextAttemptAt),
		m.FailureReason, ms(m.CreatedAt))
	for i, id := range m.LicenceIDs {
		b.Queue(`INSERT INTO mail_licences (mail_id, position, org_id, licence_id, kind, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, m.ID, i, m.OrgID, id, string(m.Kind), ms(m.CreatedAt))
	}
	t.tx.laterBatch(b)
	return nil
}

// ClaimMails is one statement, safe across processes, as ClaimDeliveries:
// the subquery locks the due rows it picks, skipping rows another claim
// holds, and a row another claim leased and committed meanwhile is
// re-checked under its lock and left out.
func (t *tx) ClaimMails(ctx context.Context, now, leaseUntil time.Time, limit int) ([]licentia.Mail, error) {
	rows, err := t.tx.Query(ctx, `UPDATE mails SET leased_until = $1 WHERE id IN (
		SELECT id FROM mails
		WHERE status = 'queued' AND next_attempt_at <= $2 AND (leased_until IS NULL OR leased_until <= $2)
		ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING `+mailColumns, ms(leaseUntil), ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("claim mails: %w", err)
	}
	out, err := collect(rows, scanMail)
	if err != nil {
		return nil, fmt.Errorf("claim mails: %w", err)
	}
	lease := ms(leaseUntil)
	for i := range out {
		out[i].LeasedUntil = &lease
	}
	slices.SortFunc(out, func(a, b licentia.Mail) int {
		return cmp.Or(a.NextAttemptAt.Compare(*b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
	if err := t.mailLicences(ctx, out); err != nil {
		return nil, fmt.Errorf("claim mails: %w", err)
	}
	return out, nil
}

func (t *tx) FinishMail(ctx context.Context, m *licentia.Mail) (bool, error) {
	if !isID(m.ID) || m.LeasedUntil == nil {
		return false, nil
	}
	tag, err := t.tx.Exec(ctx, `UPDATE mails SET status = $1, attempts = $2, last_attempt_at = $3, next_attempt_at = $4,
		failure_reason = $5, leased_until = NULL WHERE id = $6 AND leased_until = $7`,
		string(m.Status), m.Attempts, msPtr(m.LastAttemptAt), msPtr(m.NextAttemptAt), m.FailureReason, m.ID, ms(*m.LeasedUntil))
	if err != nil {
		return false, fmt.Errorf("finish mail: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

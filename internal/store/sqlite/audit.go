package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (t *tx) AppendAudit(ctx context.Context, e *licentia.AuditEntry) error {
	data := string(e.Data)
	if data == "" {
		data = "{}"
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO audit_log (id, org_id, licence_id, action, actor_type, actor_id, at, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.OrgID, e.LicenceID, e.Action, e.Actor.Type, e.Actor.ID, store.Millis(e.At), data)
	if err != nil {
		return fmt.Errorf("append audit %s: %w", e.Action, err)
	}
	return nil
}

func (r reader) OrganizationAudit(ctx context.Context, orgID string) ([]licentia.AuditEntry, error) {
	return r.audit(ctx, `WHERE org_id = ?`, orgID)
}

// audit lists the entries matching where, oldest first.
func (r reader) audit(ctx context.Context, where string, args ...any) ([]licentia.AuditEntry, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT id, org_id, licence_id, action, actor_type, actor_id, at, data
		FROM audit_log `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	defer rows.Close()
	var out []licentia.AuditEntry
	for rows.Next() {
		var e licentia.AuditEntry
		var at int64
		var data string
		if err := rows.Scan(&e.ID, &e.OrgID, &e.LicenceID, &e.Action, &e.Actor.Type, &e.Actor.ID, &at, &data); err != nil {
			return nil, fmt.Errorf("list audit: %w", err)
		}
		e.At, e.Data = store.FromMillis(at), []byte(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

func (r reader) AuditPage(ctx context.Context, orgID string, aq store.AuditQuery, limit int) ([]licentia.AuditEntry, error) {
	q := `SELECT id, org_id, licence_id, action, actor_type, actor_id, at, data FROM audit_log WHERE org_id = ?`
	args := []any{orgID}
	if aq.Before != nil {
		q += ` AND seq < (SELECT seq FROM audit_log WHERE org_id = ? AND id = ?)`
		args = append(args, orgID, *aq.Before)
	}
	if aq.Action != nil {
		q += ` AND action = ?`
		args = append(args, *aq.Action)
	}
	if aq.ActorType != nil {
		q += ` AND actor_type = ?`
		args = append(args, string(*aq.ActorType))
	}
	if aq.ActorID != nil {
		q += ` AND actor_id = ?`
		args = append(args, *aq.ActorID)
	}
	if aq.From != nil {
		q += ` AND at >= ?`
		args = append(args, store.Millis(*aq.From))
	}
	if aq.To != nil {
		q += ` AND at < ?`
		args = append(args, store.Millis(*aq.To))
	}
	rows, err := r.q.QueryContext(ctx, q+` ORDER BY seq DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("audit page: %w", err)
	}
	defer rows.Close()
	var out []licentia.AuditEntry
	for rows.Next() {
		var e licentia.AuditEntry
		var at int64
		var data string
		if err := rows.Scan(&e.ID, &e.OrgID, &e.LicenceID, &e.Action, &e.Actor.Type, &e.Actor.ID, &at, &data); err != nil {
			return nil, fmt.Errorf("audit page: %w", err)
		}
		e.At, e.Data = store.FromMillis(at), []byte(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

// dayMillis is one day in the milliseconds times are stored in.
const dayMillis = 24 * 60 * 60 * 1000

// auditByDaySQL counts entries of n actions, named :a0 to :a<n-1>, per
// day. The entries since are found from the newest backwards along
// audit_log_by_org, so the read is as long as the days it counts.
func auditByDaySQL(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = ":a" + strconv.Itoa(i)
	}
	return `SELECT at / ` + strconv.Itoa(dayMillis) + ` AS day, action, count(*) FROM audit_log
		WHERE org_id = :org AND at >= :since AND action IN (` + strings.Join(names, ", ") + `)
		AND seq > COALESCE((SELECT seq FROM audit_log WHERE org_id = :org AND at < :since ORDER BY seq DESC LIMIT 1), 0)
		GROUP BY day, action ORDER BY day, action`
}

func (r reader) AuditByDay(ctx context.Context, orgID string, actions []string, since time.Time) ([]store.AuditDay, error) {
	if len(actions) == 0 {
		return nil, nil
	}
	args := []any{sql.Named("org", orgID), sql.Named("since", store.Millis(since))}
	for i, a := range actions {
		args = append(args, sql.Named("a"+strconv.Itoa(i), a))
	}
	rows, err := r.q.QueryContext(ctx, auditByDaySQL(len(actions)), args...)
	if err != nil {
		return nil, fmt.Errorf("audit by day: %w", err)
	}
	defer rows.Close()
	var out []store.AuditDay
	for rows.Next() {
		var d store.AuditDay
		var day int64
		if err := rows.Scan(&day, &d.Action, &d.N); err != nil {
			return nil, fmt.Errorf("audit by day: %w", err)
		}
		d.Day = store.FromMillis(day * dayMillis)
		out = append(out, d)
	}
	return out, rows.Err()
}

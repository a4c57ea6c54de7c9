package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (t *tx) AppendAudit(ctx context.Context, e *licentia.AuditEntry) error {
	data := string(e.Data)
	if data == "" {
		data = "{}"
	}
	t.tx.later(`INSERT INTO audit_log (id, org_id, licence_id, action, actor_type, actor_id, at, data)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		e.ID, e.OrgID, e.LicenceID, e.Action, e.Actor.Type, e.Actor.ID, ms(e.At), data)
	return nil
}

func scanAuditEntry(row pgx.Row) (*licentia.AuditEntry, error) {
	var e licentia.AuditEntry
	var data string
	if err := row.Scan(&e.ID, &e.OrgID, &e.LicenceID, &e.Action, &e.Actor.Type, &e.Actor.ID, &e.At, &data); err != nil {
		return nil, err
	}
	e.At, e.Data = e.At.UTC(), []byte(data)
	return &e, nil
}

func (r reader) OrganizationAudit(ctx context.Context, orgID string) ([]licentia.AuditEntry, error) {
	if !isID(orgID) {
		return nil, nil
	}
	return r.audit(ctx, `WHERE org_id = $1`, orgID)
}

func (r reader) LicenceAudit(ctx context.Context, orgID, licenceID string) ([]licentia.AuditEntry, error) {
	if !isID(orgID) || !isID(licenceID) {
		return nil, nil
	}
	return r.audit(ctx, `WHERE org_id = $1 AND licence_id = $2`, orgID, licenceID)
}

// audit lists the entries matching where, oldest first.
func (r reader) audit(ctx context.Context, where string, args ...any) ([]licentia.AuditEntry, error) {
	rows, err := r.q.Query(ctx, `SELECT id, org_id, licence_id, action, actor_type, actor_id, at, data
		FROM audit_log `+where+` ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	out, err := collect(rows, scanAuditEntry)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}

// RewriteLicenceAudit replaces each entry's data with fn(data); another
// organization's licence has no entries here, so nothing changes.
func (t *tx) RewriteLicenceAudit(ctx context.Context, orgID, licenceID string, fn func([]byte) []byte) error {
	entries, err := t.LicenceAudit(ctx, orgID, licenceID)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, err := t.tx.Exec(ctx, `UPDATE audit_log SET data = $1 WHERE id = $2`, string(fn(e.Data)), e.ID); err != nil {
			return fmt.Errorf("rewrite audit: %w", err)
		}
	}
	return nil
}

func (r reader) AuditPage(ctx context.Context, orgID string, aq store.AuditQuery, limit int) ([]licentia.AuditEntry, error) {
	if !isID(orgID) || aq.Before != nil && !isID(*aq.Before) {
		return nil, nil
	}
	q := `SELECT id, org_id, licence_id, action, actor_type, actor_id, at, data FROM audit_log WHERE org_id = $1`
	args := []any{orgID, limit}
	add := func(cond string, v any) {
		args = append(args, v)
		q += ` AND ` + strings.ReplaceAll(cond, "$?", "$"+strconv.Itoa(len(args)))
	}
	if aq.Before != nil {
		add(`seq < (SELECT seq FROM audit_log WHERE org_id = $1 AND id = $?)`, *aq.Before)
	}
	if aq.Action != nil {
		add(`action = $?`, *aq.Action)
	}
	if aq.ActorType != nil {
		add(`actor_type = $?`, string(*aq.ActorType))
	}
	if aq.ActorID != nil {
		add(`actor_id = $?`, *aq.ActorID)
	}
	if aq.From != nil {
		add(`at >= $?`, ms(*aq.From))
	}
	if aq.To != nil {
		add(`at < $?`, ms(*aq.To))
	}
	rows, err := r.q.Query(ctx, q+` ORDER BY seq DESC LIMIT $2`, args...)
	if err != nil {
		return nil, fmt.Errorf("audit page: %w", err)
	}
	out, err := collect(rows, scanAuditEntry)
	if err != nil {
		return nil, fmt.Errorf("audit page: %w", err)
	}
	return out, nil
}

func (r reader) AuditByDay(ctx context.Context, orgID string, actions []string, since time.Time) ([]store.AuditDay, error) {
	if !isID(orgID) || len(actions) == 0 {
		return nil, nil
	}
	// The entries since are found from the newest backwards along
	// audit_log_by_org, so the read is as long as the days it counts.
	rows, err := r.q.Query(ctx, `SELECT floor(extract(epoch FROM at) / 86400)::bigint AS day, action, count(*) FROM audit_log
		WHERE org_id = $1 AND at >= $2 AND action = ANY($3)
		AND seq > COALESCE((SELECT seq FROM audit_log WHERE org_id = $1 AND at < $2 ORDER BY seq DESC LIMIT 1), 0)
		GROUP BY day, action ORDER BY day, action`, orgID, ms(since), actions)
	if err != nil {
		return nil, fmt.Errorf("audit by day: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.AuditDay, error) {
		var d store.AuditDay
		var day int64
		err := row.Scan(&day, &d.Action, &d.N)
		d.Day = time.Unix(day*86400, 0).UTC()
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("audit by day: %w", err)
	}
	return out, nil
}

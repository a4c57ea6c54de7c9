package sqlite

import (
	"context"
	"fmt"

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

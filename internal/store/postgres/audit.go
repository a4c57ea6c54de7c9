package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
)

func (t *tx) AppendAudit(ctx context.Context, e *licentia.AuditEntry) error {
	data := string(e.Data)
	if data == "" {
		data = "{}"
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO audit_log (id, org_id, licence_id, action, actor_type, actor_id, at, data)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		e.ID, e.OrgID, e.LicenceID, e.Action, e.Actor.Type, e.Actor.ID, ms(e.At), data)
	if err != nil {
		return fmt.Errorf("append audit %s: %w", e.Action, err)
	}
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
	rows, err := r.q.Query(ctx, `SELECT id, org_id, licence_id, action, actor_type, actor_id, at, data
		FROM audit_log WHERE org_id = $1 ORDER BY seq`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	out, err := collect(rows, scanAuditEntry)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	return out, nil
}

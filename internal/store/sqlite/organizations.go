package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const orgColumns = `id, name, slug, plan, created_at`

func scanOrganization(row interface{ Scan(...any) error }) (*licentia.Organization, error) {
	var o licentia.Organization
	var created int64
	if err := row.Scan(&o.ID, &o.Name, &o.Slug, &o.Plan, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, store.NotFound(licentia.CodeNotFound, "Organization")
		}
		return nil, err
	}
	o.CreatedAt = store.FromMillis(created)
	return &o, nil
}

func (r reader) Organization(ctx context.Context, orgID string) (*licentia.Organization, error) {
	o, err := scanOrganization(r.q.QueryRowContext(ctx, `SELECT `+orgColumns+` FROM organizations WHERE id = ?`, orgID))
	if err != nil {
		return nil, fmt.Errorf("read organization: %w", err)
	}
	return o, nil
}

func (r reader) OrganizationBySlug(ctx context.Context, slug string) (*licentia.Organization, error) {
	o, err := scanOrganization(r.q.QueryRowContext(ctx, `SELECT `+orgColumns+` FROM organizations WHERE slug = ?`, slug))
	if err != nil {
		return nil, fmt.Errorf("read organization by slug: %w", err)
	}
	return o, nil
}

func (r reader) Members(ctx context.Context, orgID string) ([]licentia.Member, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT id, org_id, email, role, created_at FROM members
		WHERE org_id = ? ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	defer rows.Close()
	var out []licentia.Member
	for rows.Next() {
		var m licentia.Member
		var created int64
		if err := rows.Scan(&m.ID, &m.OrgID, &m.Email, &m.Role, &created); err != nil {
			return nil, fmt.Errorf("list members: %w", err)
		}
		m.CreatedAt = store.FromMillis(created)
		out = append(out, m)
	}
	return out, rows.Err()
}

func (r reader) PendingInvitations(ctx context.Context, orgID string, now time.Time) ([]licentia.Invitation, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT id, org_id, email, role, expires_at, created_at FROM invitations
		WHERE org_id = ? AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?
		ORDER BY created_at, id`, orgID, store.Millis(now))
	if err != nil {
		return nil, fmt.Errorf("list invitations: %w", err)
	}
	defer rows.Close()
	var out []licentia.Invitation
	for rows.Next() {
		var inv licentia.Invitation
		var expires, created int64
		if err := rows.Scan(&inv.ID, &inv.OrgID, &inv.Email, &inv.Role, &expires, &created); err != nil {
			return nil, fmt.Errorf("list invitations: %w", err)
		}
		inv.ExpiresAt, inv.CreatedAt = store.FromMillis(expires), store.FromMillis(created)
		out = append(out, inv)
	}
	return out, rows.Err()
}

func (r reader) Setting(ctx context.Context, name string) (string, error) {
	var v string
	err := r.q.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read setting %s: %w", name, err)
	}
	return v, nil
}

// LockOrganization needs no statement: the writer connection and BEGIN
// IMMEDIATE already make every transaction exclusive.
func (t *tx) LockOrganization(ctx context.Context, orgID string) error { return nil }

func (t *tx) CreateOrganization(ctx context.Context, o *licentia.Organization) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO organizations (`+orgColumns+`) VALUES (?, ?, ?, ?, ?)`,
		o.ID, o.Name, o.Slug, o.Plan, store.Millis(o.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "An organization with this slug already exists.")
	}
	if err != nil {
		return fmt.Errorf("create organization: %w", err)
	}
	return nil
}

func (t *tx) CreateMember(ctx context.Context, m *licentia.Member) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO members (id, org_id, email, role, created_at) VALUES (?, ?, ?, ?, ?)`,
		m.ID, m.OrgID, m.Email, m.Role, store.Millis(m.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "This address is already a member.")
	}
	if err != nil {
		return fmt.Errorf("create member: %w", err)
	}
	return nil
}

func (t *tx) CreateInvitation(ctx context.Context, inv *licentia.Invitation) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO invitations (id, org_id, email, role, expires_at, created_at, accepted_at, revoked_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		inv.ID, inv.OrgID, inv.Email, inv.Role, store.Millis(inv.ExpiresAt), store.Millis(inv.CreatedAt),
		store.MillisPtr(inv.AcceptedAt), store.MillisPtr(inv.RevokedAt))
	if err != nil {
		return fmt.Errorf("create invitation: %w", err)
	}
	return nil
}

// LockSetting needs no lock of its own: a transaction holds SQLite's one
// write lock, across processes, from its start to its end.
func (t *tx) LockSetting(ctx context.Context, name string, exclusive bool) (string, error) {
	return t.Setting(ctx, name)
}

func (t *tx) SetSetting(ctx context.Context, name, value string) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
	if err != nil {
		return fmt.Errorf("set setting %s: %w", name, err)
	}
	return nil
}

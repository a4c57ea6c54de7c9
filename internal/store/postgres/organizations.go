package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const orgColumns = `id, name, slug, plan, created_at`

func orgNotFound() error { return store.NotFound(licentia.CodeNotFound, "Organization") }

func scanOrganization(row pgx.Row) (*licentia.Organization, error) {
	var o licentia.Organization
	if err := row.Scan(&o.ID, &o.Name, &o.Slug, &o.Plan, &o.CreatedAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, orgNotFound()
		}
		return nil, err
	}
	o.CreatedAt = o.CreatedAt.UTC()
	return &o, nil
}

func (r reader) Organization(ctx context.Context, orgID string) (*licentia.Organization, error) {
	if !isID(orgID) {
		return nil, fmt.Errorf("read organization: %w", orgNotFound())
	}
	o, err := scanOrganization(r.q.QueryRow(ctx, `SELECT `+orgColumns+` FROM organizations WHERE id = $1`, orgID))
	if err != nil {
		return nil, fmt.Errorf("read organization: %w", err)
	}
	return o, nil
}

func (r reader) OrganizationBySlug(ctx context.Context, slug string) (*licentia.Organization, error) {
	if !isText(slug) {
		return nil, fmt.Errorf("read organization by slug: %w", orgNotFound())
	}
	o, err := scanOrganization(r.q.QueryRow(ctx, `SELECT `+orgColumns+` FROM organizations WHERE slug = $1`, slug))
	if err != nil {
		return nil, fmt.Errorf("read organization by slug: %w", err)
	}
	return o, nil
}

func scanMember(row pgx.Row) (*licentia.Member, error) {
	var m licentia.Member
	if err := row.Scan(&m.ID, &m.OrgID, &m.Email, &m.Role, &m.CreatedAt); err != nil {
		return nil, err
	}
	m.CreatedAt = m.CreatedAt.UTC()
	return &m, nil
}

func (r reader) Members(ctx context.Context, orgID string) ([]licentia.Member, error) {
	if !isID(orgID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT id, org_id, email, role, created_at FROM members
		WHERE org_id = $1 ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	out, err := collect(rows, scanMember)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	return out, nil
}

func scanInvitation(row pgx.Row) (*licentia.Invitation, error) {
	var inv licentia.Invitation
	if err := row.Scan(&inv.ID, &inv.OrgID, &inv.Email, &inv.Role, &inv.ExpiresAt, &inv.CreatedAt); err != nil {
		return nil, err
	}
	inv.ExpiresAt, inv.CreatedAt = inv.ExpiresAt.UTC(), inv.CreatedAt.UTC()
	return &inv, nil
}

func (r reader) PendingInvitations(ctx context.Context, orgID string, now time.Time) ([]licentia.Invitation, error) {
	if !isID(orgID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT id, org_id, email, role, expires_at, created_at FROM invitations
		WHERE org_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2
		ORDER BY created_at, id`, orgID, ms(now))
	if err != nil {
		return nil, fmt.Errorf("list invitations: %w", err)
	}
	out, err := collect(rows, scanInvitation)
	if err != nil {
		return nil, fmt.Errorf("list invitations: %w", err)
	}
	return out, nil
}

func (r reader) Setting(ctx context.Context, name string) (string, error) {
	var v string
	err := r.q.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read setting %s: %w", name, err)
	}
	return v, nil
}

// LockOrganization takes the organization's row lock, which other
// transactions, in this process or another, wait for until this one ends.
// A missing organization locks nothing; the read that follows answers not
// found.
//
// It is the first lock of the order every transaction follows (see
// DB.InTx). FOR NO KEY UPDATE, not FOR UPDATE: it excludes
// the other holders of this lock and changes of the row, but not the FOR
// KEY SHARE lock that every insert referencing the organization (a licence,
// an audit entry) takes on the row. With FOR UPDATE an activation, holding
// its licence and counter rows, waited at its audit insert for an issue
// holding this lock, while the issue waited for the activation's counter
// row: a deadlock.
func (t *tx) LockOrganization(ctx context.Context, orgID string) error {
	if !isID(orgID) {
		return nil
	}
	if _, err := t.tx.Exec(ctx, `SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE`, orgID); err != nil {
		return fmt.Errorf("lock organization: %w", err)
	}
	return nil
}

func (t *tx) CreateOrganization(ctx context.Context, o *licentia.Organization) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO organizations (`+orgColumns+`) VALUES ($1, $2, $3, $4, $5)`,
		o.ID, o.Name, o.Slug, o.Plan, ms(o.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "An organization with this slug already exists.")
	}
	if err != nil {
		return fmt.Errorf("create organization: %w", err)
	}
	return nil
}

func (t *tx) CreateMember(ctx context.Context, m *licentia.Member) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO members (id, org_id, email, role, created_at) VALUES ($1, $2, $3, $4, $5)`,
		m.ID, m.OrgID, m.Email, m.Role, ms(m.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "This address is already a member.")
	}
	if err != nil {
		return fmt.Errorf("create member: %w", err)
	}
	return nil
}

func (t *tx) CreateInvitation(ctx context.Context, inv *licentia.Invitation) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO invitations (id, org_id, email, role, expires_at, created_at, accepted_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		inv.ID, inv.OrgID, inv.Email, inv.Role, ms(inv.ExpiresAt), ms(inv.CreatedAt),
		msPtr(inv.AcceptedAt), msPtr(inv.RevokedAt))
	if err != nil {
		return fmt.Errorf("create invitation: %w", err)
	}
	return nil
}

func (t *tx) LockSetting(ctx context.Context, name string, exclusive bool) (string, error) {
	mode := "SHARE"
	if exclusive {
		mode = "UPDATE"
	}
	var v string
	err := t.tx.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1 FOR `+mode, name).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("lock setting %s: %w", name, err)
	}
	return v, nil
}

func (t *tx) SetSetting(ctx context.Context, name, value string) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
	if err != nil {
		return fmt.Errorf("set setting %s: %w", name, err)
	}
	return nil
}

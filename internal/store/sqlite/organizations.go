package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const orgColumns = `id, name, slug, plan, created_at, display_name, support_email, logo_url, accent`

func scanOrganization(row interface{ Scan(...any) error }) (*licentia.Organization, error) {
	var o licentia.Organization
	var created int64
	b := &o.Branding
	if err := row.Scan(&o.ID, &o.Name, &o.Slug, &o.Plan, &created, &b.DisplayName, &b.SupportEmail, &b.LogoURL, &b.Accent); err != nil {
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
	b := o.Branding
	_, err := t.tx.ExecContext(ctx, `INSERT INTO organizations (`+orgColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Name, o.Slug, o.Plan, store.Millis(o.CreatedAt), b.DisplayName, b.SupportEmail, b.LogoURL, b.Accent)
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "An organization with this slug already exists.")
	}
	if err != nil {
		return fmt.Errorf("create organization: %w", err)
	}
	return nil
}

func (t *tx) SetBranding(ctx context.Context, orgID string, b licentia.Branding) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE organizations SET display_name = ?, support_email = ?, logo_url = ?, accent = ?
		WHERE id = ?`, b.DisplayName, b.SupportEmail, b.LogoURL, b.Accent, orgID)
	if err != nil {
		return fmt.Errorf("set branding: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("set branding: %w", store.NotFound(licentia.CodeNotFound, "Organization"))
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

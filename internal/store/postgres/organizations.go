package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const orgColumns = `id, name, slug, plan, created_at, display_name, support_email, logo_url, accent`

func orgNotFound() error { return store.NotFound(licentia.CodeNotFound, "Organization") }

func scanOrganization(row pgx.Row) (*licentia.Organization, error) {
	var o licentia.Organization
	b := &o.Branding
	if err := row.Scan(&o.ID, &o.Name, &o.Slug, &o.Plan, &o.CreatedAt, &b.DisplayName, &b.SupportEmail, &b.LogoURL, &b.Accent); err != nil {
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
	b := o.Branding
	_, err := t.tx.Exec(ctx, `INSERT INTO organizations (`+orgColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		o.ID, o.Name, o.Slug, o.Plan, ms(o.CreatedAt), b.DisplayName, b.SupportEmail, b.LogoURL, b.Accent)
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "An organization with this slug already exists.")
	}
	if err != nil {
		return fmt.Errorf("create organization: %w", err)
	}
	return nil
}

func (t *tx) SetBranding(ctx context.Context, orgID string, b licentia.Branding) error {
	if !isID(orgID) {
		return fmt.Errorf("set branding: %w", orgNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE organizations SET display_name = $1, support_email = $2, logo_url = $3, accent = $4
		WHERE id = $5`, b.DisplayName, b.SupportEmail, b.LogoURL, b.Accent, orgID)
	if err != nil {
		return fmt.Errorf("set branding: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("set branding: %w", orgNotFound())
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
	if name == store.SettingSweepWatermark {
		t.mark = nil
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
	if err != nil {
		return fmt.Errorf("set setting %s: %w", name, err)
	}
	return nil
}

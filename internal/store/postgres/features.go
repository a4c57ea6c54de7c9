package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// isForeignKey reports whether err is a foreign key violation.
func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

func (r reader) ProductFeatures(ctx context.Context, orgID, productID string) ([]licentia.Feature, error) {
	out := []licentia.Feature{}
	if !isID(orgID) || !isText(productID) {
		return out, nil
	}
	rows, err := r.q.Query(ctx, `SELECT product_id, org_id, code, name, created_at FROM product_features
		WHERE org_id = $1 AND product_id = $2 ORDER BY code`, orgID, productID)
	if err != nil {
		return nil, fmt.Errorf("read product features: %w", err)
	}
	fs, err := collect(rows, scanFeature)
	if err != nil {
		return nil, fmt.Errorf("read product features: %w", err)
	}
	return append(out, fs...), nil
}

func scanFeature(row pgx.Row) (*licentia.Feature, error) {
	var f licentia.Feature
	if err := row.Scan(&f.ProductID, &f.OrgID, &f.Code, &f.Name, &f.CreatedAt); err != nil {
		return nil, err
	}
	f.CreatedAt = f.CreatedAt.UTC()
	return &f, nil
}

// PutProductFeature holds the product's row (FOR NO KEY UPDATE, which
// licences referencing the product pass) while it counts and adds, so two
// processes adding features at once never make the 201st.
func (t *tx) PutProductFeature(ctx context.Context, f *licentia.Feature) (*licentia.Feature, bool, error) {
	if !isID(f.OrgID) {
		return nil, false, store.NotFound(licentia.CodeProductNotFound, "Product")
	}
	var one int
	err := t.tx.QueryRow(ctx, `SELECT 1 FROM products WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE`, f.OrgID, f.ProductID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, store.NotFound(licentia.CodeProductNotFound, "Product")
	}
	if err != nil {
		return nil, false, fmt.Errorf("save product feature: %w", err)
	}
	stored, err := scanFeature(t.tx.QueryRow(ctx, `UPDATE product_features SET name = $1 WHERE product_id = $2 AND code = $3
		RETURNING product_id, org_id, code, name, created_at`, f.Name, f.ProductID, f.Code))
	if err == nil {
		return stored, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, false, fmt.Errorf("save product feature: %w", err)
	}
	var n int
	if err := t.tx.QueryRow(ctx, `SELECT count(*) FROM product_features WHERE product_id = $1`, f.ProductID).Scan(&n); err != nil {
		return nil, false, fmt.Errorf("save product feature: %w", err)
	}
	if n >= licentia.MaxFeatures {
		return nil, false, store.TooManyFeatures()
	}
	stored, err = scanFeature(t.tx.QueryRow(ctx, `INSERT INTO product_features (product_id, code, org_id, name, created_at)
		VALUES ($1, $2, $3, $4, $5) RETURNING product_id, org_id, code, name, created_at`, f.ProductID, f.Code, f.OrgID, f.Name, ms(f.CreatedAt)))
	if err != nil {
		return nil, false, fmt.Errorf("save product feature: %w", err)
	}
	return stored, true, nil
}

// DeleteProductFeature removes a feature no licence grants; the foreign
// key of licence_features refuses the others, and its row locks decide a
// race with a licence being granted it.
func (t *tx) DeleteProductFeature(ctx context.Context, orgID, productID, code string) error {
	if !isID(orgID) {
		return store.FeatureNotFound()
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM product_features WHERE org_id = $1 AND product_id = $2 AND code = $3`, orgID, productID, code)
	if isForeignKey(err) {
		return store.FeatureGranted()
	}
	if err != nil {
		return fmt.Errorf("delete product feature: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return store.FeatureNotFound()
	}
	return nil
}

// writeGrants makes licence_features hold l's grants, which were before;
// nothing is written when they are the same.
func (t *tx) writeGrants(ctx context.Context, l *licentia.Licence, before []licentia.FeatureGrant) error {
	if licentia.EqualGrants(before, l.Features) {
		return nil
	}
	if len(before) > 0 {
		if _, err := t.tx.Exec(ctx, `DELETE FROM licence_features WHERE licence_id = $1`, l.ID); err != nil {
			return fmt.Errorf("write licence features: %w", err)
		}
	}
	if len(l.Features) == 0 {
		return nil
	}
	codes := make([]string, len(l.Features))
	expires := make([]*time.Time, len(l.Features))
	for i, g := range l.Features {
		codes[i] = g.Code
		if g.ExpiresAt != nil {
			expires[i] = new(ms(*g.ExpiresAt))
		}
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO licence_features (licence_id, code, org_id, product_id, expires_at)
		SELECT $1, g.code, $2, $3, g.expires_at FROM unnest($4::text[], $5::timestamptz[]) AS g (code, expires_at)`,
		l.ID, l.OrgID, l.ProductID, codes, expires)
	if isForeignKey(err) {
		return store.FeatureNotInCatalogue(foreignCode(err, codes))
	}
	if err != nil {
		return fmt.Errorf("write licence features: %w", err)
	}
	return nil
}

// foreignCode names the code a foreign key violation is about, from its
// detail, or the first of codes when the detail does not say.
func foreignCode(err error, codes []string) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		for _, c := range codes {
			if strings.Contains(pe.Detail, ", "+c+")") {
				return c
			}
		}
	}
	return codes[0]
}

// CountLicencesWithFeature counts from the licences themselves: the
// counters are not kept per feature.
func (r reader) CountLicencesWithFeature(ctx context.Context, orgID string, productID *string, feature string, since, now time.Time) (*store.LicenceCounts, error) {
	var c store.LicenceCounts
	if !isID(orgID) || !isText(feature) || (productID != nil && !isText(*productID)) {
		return &c, nil
	}
	q := `SELECT ` + store.Qualified(licenceColumns, "l") + ` FROM licence_features f JOIN licences l ON l.id = f.licence_id
		WHERE f.org_id = $1 AND f.code = $2 AND ($3::text IS NULL OR f.product_id = $3)`
	rows, err := r.q.Query(ctx, q, orgID, feature, productID)
	if err != nil {
		return nil, fmt.Errorf("count licences: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		l, err := scanLicence(rows)
		if err != nil {
			return nil, fmt.Errorf("count licences: %w", err)
		}
		store.CountLicence(&c, l, since, now)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count licences: %w", err)
	}
	return &c, nil
}

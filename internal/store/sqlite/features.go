package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// isForeignKey reports whether err is a FOREIGN KEY violation.
func isForeignKey(err error) bool {
	var se *sqlite3.Error
	return errors.As(err, &se) && se.Code() == sqlite3lib.SQLITE_CONSTRAINT_FOREIGNKEY
}

func (r reader) ProductFeatures(ctx context.Context, orgID, productID string) ([]licentia.Feature, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT product_id, org_id, code, name, created_at FROM product_features
		WHERE org_id = ? AND product_id = ? ORDER BY code`, orgID, productID)
	if err != nil {
		return nil, fmt.Errorf("read product features: %w", err)
	}
	defer rows.Close()
	out := []licentia.Feature{}
	for rows.Next() {
		var f licentia.Feature
		var created int64
		if err := rows.Scan(&f.ProductID, &f.OrgID, &f.Code, &f.Name, &created); err != nil {
			return nil, fmt.Errorf("read product features: %w", err)
		}
		f.CreatedAt = store.FromMillis(created)
		out = append(out, f)
	}
	return out, rows.Err()
}

// PutProductFeature renames the feature when the product has it, and
// otherwise adds it unless the product has MaxFeatures already: SQLite's
// one writer holds the count and the insert together.
func (t *tx) PutProductFeature(ctx context.Context, f *licentia.Feature) (*licentia.Feature, bool, error) {
	var one int
	err := t.tx.QueryRowContext(ctx, `SELECT 1 FROM products WHERE org_id = ? AND id = ?`, f.OrgID, f.ProductID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, store.NotFound(licentia.CodeProductNotFound, "Product")
	}
	if err != nil {
		return nil, false, fmt.Errorf("save product feature: %w", err)
	}
	var created int64
	err = t.tx.QueryRowContext(ctx, `UPDATE product_features SET name = ? WHERE org_id = ? AND product_id = ? AND code = ?
		RETURNING created_at`, f.Name, f.OrgID, f.ProductID, f.Code).Scan(&created)
	if err == nil {
		stored := *f
		stored.CreatedAt = store.FromMillis(created)
		return &stored, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, false, fmt.Errorf("save product feature: %w", err)
	}
	var n int
	if err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM product_features WHERE product_id = ?`, f.ProductID).Scan(&n); err != nil {
		return nil, false, fmt.Errorf("save product feature: %w", err)
	}
	if n >= licentia.MaxFeatures {
		return nil, false, store.TooManyFeatures()
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO product_features (product_id, code, org_id, name, created_at) VALUES (?, ?, ?, ?, ?)`,
		f.ProductID, f.Code, f.OrgID, f.Name, store.Millis(f.CreatedAt)); err != nil {
		return nil, false, fmt.Errorf("save product feature: %w", err)
	}
	stored := *f
	stored.CreatedAt = licentia.TruncateMillis(f.CreatedAt)
	return &stored, true, nil
}

// DeleteProductFeature removes a feature no licence grants; the foreign
// key of licence_features refuses the others.
func (t *tx) DeleteProductFeature(ctx context.Context, orgID, productID, code string) error {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM product_features WHERE org_id = ? AND product_id = ? AND code = ?`, orgID, productID, code)
	if isForeignKey(err) {
		return store.FeatureGranted()
	}
	if err != nil {
		return fmt.Errorf("delete product feature: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
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
		if _, err := t.tx.ExecContext(ctx, `DELETE FROM licence_features WHERE licence_id = ?`, l.ID); err != nil {
			return fmt.Errorf("write licence features: %w", err)
		}
	}
	for _, g := range l.Features {
		_, err := t.tx.ExecContext(ctx, `INSERT INTO licence_features (licence_id, code, org_id, product_id, expires_at) VALUES (?, ?, ?, ?, ?)`,
			l.ID, g.Code, l.OrgID, l.ProductID, store.MillisPtr(g.ExpiresAt))
		if isForeignKey(err) {
			return store.FeatureNotInCatalogue(g.Code)
		}
		if err != nil {
			return fmt.Errorf("write licence features: %w", err)
		}
	}
	return nil
}

// CountLicencesWithFeature counts from the licences themselves: the
// counters are not kept per feature.
func (r reader) CountLicencesWithFeature(ctx context.Context, orgID string, productID *string, feature string, since, now time.Time) (*store.LicenceCounts, error) {
	q := `SELECT ` + store.Qualified(licenceColumns, "l") + ` FROM licence_features f CROSS JOIN licences l ON l.id = f.licence_id
		WHERE f.org_id = ? AND f.code = ?`
	args := []any{orgID, feature}
	if productID != nil {
		q += ` AND f.product_id = ?`
		args = append(args, *productID)
	}
	rows, err := r.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("count licences: %w", err)
	}
	defer rows.Close()
	var c store.LicenceCounts
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

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

const productColumns = `id, org_id, name, key_prefix, current_major, machines_per_seat,
	licence_signing_domain, verdict_signing_domain, created_at, updated_at, heartbeat_interval_seconds,
	machine_match, transfers_per_30_days, max_concurrent, lease_ttl_seconds, max_borrow_hours`

const productKeyColumns = `id, product_id, public_key, fingerprint, sealed, master_fingerprint, status, created_at, retired_at`

func scanProduct(row interface{ Scan(...any) error }) (*licentia.Product, error) {
	var p licentia.Product
	var created, updated int64
	err := row.Scan(&p.ID, &p.OrgID, &p.Name, &p.KeyPrefix, &p.CurrentMajor, &p.MachinesPerSeat,
		&p.LicenceSigningDomain, &p.VerdictSigningDomain, &created, &updated, &p.HeartbeatIntervalSeconds,
		&p.MachineMatch, &p.TransfersPer30Days, &p.MaxConcurrent, &p.LeaseTTLSeconds, &p.MaxBorrowHours)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, store.NotFound(licentia.CodeProductNotFound, "Product")
		}
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = store.FromMillis(created), store.FromMillis(updated)
	return &p, nil
}

func scanProductKey(row interface{ Scan(...any) error }) (licentia.ProductKey, error) {
	var k licentia.ProductKey
	var created int64
	var retired *int64
	var pub []byte
	err := row.Scan(&k.ID, &k.ProductID, &pub, &k.Fingerprint, &k.Sealed, &k.MasterFingerprint, &k.Status, &created, &retired)
	k.PublicKey = pub
	k.CreatedAt, k.RetiredAt = store.FromMillis(created), store.FromMillisPtr(retired)
	return k, err
}

// withKeys loads the key history of products, oldest key first. The keys
// are read with the same filter as the products, so a listing of one
// organization never reads another's keys.
func (r reader) withKeys(ctx context.Context, products []*licentia.Product, where string, args ...any) error {
	if len(products) == 0 {
		return nil
	}
	byID := make(map[string]*licentia.Product, len(products))
	for _, p := range products {
		byID[p.ID] = p
	}
	rows, err := r.q.QueryContext(ctx, `SELECT `+productKeyColumns+` FROM product_keys
		WHERE product_id IN (SELECT id FROM products `+where+`) ORDER BY product_id, created_at, id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		k, err := scanProductKey(rows)
		if err != nil {
			return err
		}
		if p, ok := byID[k.ProductID]; ok {
			p.Keys = append(p.Keys, k)
		}
	}
	return rows.Err()
}

func (r reader) queryProducts(ctx context.Context, where string, args ...any) ([]licentia.Product, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+productColumns+` FROM products `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, err
	}
	var ptrs []*licentia.Product
	for rows.Next() {
		p, err := scanProduct(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		ptrs = append(ptrs, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ptrs) == 0 {
		// nil, not an empty slice, as every other list answers.
		return nil, nil
	}
	if err := r.withKeys(ctx, ptrs, where, args...); err != nil {
		return nil, err
	}
	out := make([]licentia.Product, len(ptrs))
	for i, p := range ptrs {
		out[i] = *p
	}
	return out, nil
}

func (r reader) Products(ctx context.Context, orgID string) ([]licentia.Product, error) {
	ps, err := r.queryProducts(ctx, `WHERE org_id = ?`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list products: %w", err)
	}
	return ps, nil
}

func (r reader) AllProducts(ctx context.Context) ([]licentia.Product, error) {
	ps, err := r.queryProducts(ctx, ``)
	if err != nil {
		return nil, fmt.Errorf("list all products: %w", err)
	}
	return ps, nil
}

func (r reader) Product(ctx context.Context, orgID, id string) (*licentia.Product, error) {
	const where = `WHERE org_id = ? AND id = ?`
	p, err := scanProduct(r.q.QueryRowContext(ctx, `SELECT `+productColumns+` FROM products `+where, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read product: %w", err)
	}
	if err := r.withKeys(ctx, []*licentia.Product{p}, where, orgID, id); err != nil {
		return nil, fmt.Errorf("read product: %w", err)
	}
	return p, nil
}

func (r reader) CountProducts(ctx context.Context, orgID string, since time.Time) (all, createdSince int64, err error) {
	err = r.q.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(created_at >= ?), 0) FROM products WHERE org_id = ?`,
		store.Millis(since), orgID).Scan(&all, &createdSince)
	if err != nil {
		return 0, 0, fmt.Errorf("count products: %w", err)
	}
	return all, createdSince, nil
}

func (r reader) ProductNameUse(ctx context.Context, field store.ProductField, value string) (store.NameUse, error) {
	col := "id"
	if field == store.FieldKeyPrefix {
		col = "key_prefix"
	}
	var inUse, used int
	err := r.q.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM products WHERE `+col+` = ?),
		EXISTS (SELECT 1 FROM product_names WHERE field = ? AND value = ?)`,
		value, string(field), value).Scan(&inUse, &used)
	if err != nil {
		return 0, fmt.Errorf("check product %s: %w", field, err)
	}
	switch {
	case inUse == 1:
		return store.NameTaken, nil
	case used == 1:
		return store.NameUsedBefore, nil
	}
	return store.NameFree, nil
}

func (t *tx) CreateProduct(ctx context.Context, p *licentia.Product) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO products (`+productColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.OrgID, p.Name, p.KeyPrefix, p.CurrentMajor, p.MachinesPerSeat,
		p.LicenceSigningDomain, p.VerdictSigningDomain, store.Millis(p.CreatedAt), store.Millis(p.UpdatedAt), p.HeartbeatIntervalSeconds,
		string(p.MachineMatch), p.TransfersPer30Days, p.MaxConcurrent, p.LeaseTTLSeconds, p.MaxBorrowHours)
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The product id or key prefix is taken.")
	}
	if err != nil {
		return fmt.Errorf("create product: %w", err)
	}
	// Ids and prefixes are never reused, even after their product is gone.
	// The id is checked first, so when both were used it is the one named.
	for _, name := range []struct {
		field store.ProductField
		value string
	}{{store.FieldID, p.ID}, {store.FieldKeyPrefix, p.KeyPrefix}} {
		_, err := t.tx.ExecContext(ctx, `INSERT INTO product_names (field, value) VALUES (?, ?)`, string(name.field), name.value)
		if isUnique(err) {
			return &licentia.Error{Code: licentia.CodeProductReserved, Message: "The product " + string(name.field) + " was used before.",
				Details: map[string]any{"field": string(name.field)}}
		}
		if err != nil {
			return fmt.Errorf("create product: %w", err)
		}
	}
	for i := range p.Keys {
		if err := t.AddProductKey(ctx, &p.Keys[i]); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) UpdateProduct(ctx context.Context, p *licentia.Product) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE products SET name = ?, current_major = ?, machines_per_seat = ?, updated_at = ?,
		heartbeat_interval_seconds = ?, machine_match = ?, transfers_per_30_days = ?,
		max_concurrent = ?, lease_ttl_seconds = ?, max_borrow_hours = ? WHERE org_id = ? AND id = ?`,
		p.Name, p.CurrentMajor, p.MachinesPerSeat, store.Millis(p.UpdatedAt), p.HeartbeatIntervalSeconds,
		string(p.MachineMatch), p.TransfersPer30Days, p.MaxConcurrent, p.LeaseTTLSeconds, p.MaxBorrowHours, p.OrgID, p.ID)
	if err != nil {
		return fmt.Errorf("update product: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.NotFound(licentia.CodeProductNotFound, "Product")
	}
	return nil
}

func (t *tx) AddProductKey(ctx context.Context, k *licentia.ProductKey) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO product_keys (`+productKeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.ProductID, []byte(k.PublicKey), k.Fingerprint, k.Sealed, k.MasterFingerprint, k.Status,
		store.Millis(k.CreatedAt), store.MillisPtr(k.RetiredAt))
	if err != nil {
		return fmt.Errorf("add product key: %w", err)
	}
	return nil
}

func (t *tx) SetProductKeyStatus(ctx context.Context, productID, keyID string, status licentia.KeyStatus, retiredAt *time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE product_keys SET status = ?, retired_at = ? WHERE product_id = ? AND id = ?`,
		status, store.MillisPtr(retiredAt), productID, keyID)
	if err != nil {
		return fmt.Errorf("set product key status: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.NotFound(licentia.CodePublicKeyNotFound, "Public key")
	}
	return nil
}

func (t *tx) ResealProductKey(ctx context.Context, keyID string, sealed []byte, masterFingerprint string) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE product_keys SET sealed = ?, master_fingerprint = ? WHERE id = ?`,
		sealed, masterFingerprint, keyID)
	if err != nil {
		return fmt.Errorf("reseal product key: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.NotFound(licentia.CodePublicKeyNotFound, "Public key")
	}
	return nil
}

func (t *tx) DeleteProduct(ctx context.Context, orgID, id string) error {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM products WHERE org_id = ? AND id = ?`, orgID, id)
	if err != nil {
		return fmt.Errorf("delete product: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return store.NotFound(licentia.CodeProductNotFound, "Product")
	}
	return nil
}

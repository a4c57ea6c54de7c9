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

const productColumns = `id, org_id, name, key_prefix, current_major, machines_per_seat,
	licence_signing_domain, verdict_signing_domain, created_at, updated_at, heartbeat_interval_seconds,
	machine_match, transfers_per_30_days, max_concurrent, lease_ttl_seconds, max_borrow_hours`

const productKeyColumns = `id, product_id, public_key, fingerprint, sealed, master_fingerprint, status, created_at, retired_at`

func productNotFound() error { return store.NotFound(licentia.CodeProductNotFound, "Product") }

func productKeyNotFound() error { return store.NotFound(licentia.CodePublicKeyNotFound, "Public key") }

// isProduct reports whether orgID and id can name a stored product. Product
// ids are text, not UUIDs, but text that PostgreSQL refuses would still fail
// the statement, so anything else answers like a missing product.
func isProduct(orgID, id string) bool { return isID(orgID) && isText(id) }

func scanProduct(row pgx.Row) (*licentia.Product, error) {
	var p licentia.Product
	err := row.Scan(&p.ID, &p.OrgID, &p.Name, &p.KeyPrefix, &p.CurrentMajor, &p.MachinesPerSeat,
		&p.LicenceSigningDomain, &p.VerdictSigningDomain, &p.CreatedAt, &p.UpdatedAt, &p.HeartbeatIntervalSeconds,
		&p.MachineMatch, &p.TransfersPer30Days, &p.MaxConcurrent, &p.LeaseTTLSeconds, &p.MaxBorrowHours)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, productNotFound()
	}
	if err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return &p, nil
}

func scanProductKey(row pgx.Row) (*licentia.ProductKey, error) {
	var k licentia.ProductKey
	var pub []byte
	err := row.Scan(&k.ID, &k.ProductID, &pub, &k.Fingerprint, &k.Sealed, &k.MasterFingerprint, &k.Status,
		&k.CreatedAt, &k.RetiredAt)
	if err != nil {
		return nil, err
	}
	k.PublicKey = pub
	k.CreatedAt, k.RetiredAt = k.CreatedAt.UTC(), utcPtr(k.RetiredAt)
	return &k, nil
}

// withKeys loads the key history of products, oldest key first.
func (r reader) withKeys(ctx context.Context, products []licentia.Product) error {
	if len(products) == 0 {
		return nil
	}
	ids := make([]string, len(products))
	index := make(map[string]int, len(products))
	for i, p := range products {
		ids[i], index[p.ID] = p.ID, i
	}
	rows, err := r.q.Query(ctx, `SELECT `+productKeyColumns+` FROM product_keys
		WHERE product_id = ANY ($1) ORDER BY product_id, created_at, id`, ids)
	if err != nil {
		return err
	}
	keys, err := collect(rows, scanProductKey)
	if err != nil {
		return err
	}
	for _, k := range keys {
		p := &products[index[k.ProductID]]
		p.Keys = append(p.Keys, k)
	}
	return nil
}

func (r reader) queryProducts(ctx context.Context, where string, args ...any) ([]licentia.Product, error) {
	rows, err := r.q.Query(ctx, `SELECT `+productColumns+` FROM products `+where+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, err
	}
	out, err := collect(rows, scanProduct)
	if err != nil {
		return nil, err
	}
	if err := r.withKeys(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (r reader) Products(ctx context.Context, orgID string) ([]licentia.Product, error) {
	if !isID(orgID) {
		return nil, nil
	}
	ps, err := r.queryProducts(ctx, `WHERE org_id = $1`, orgID)
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
	if !isProduct(orgID, id) {
		return nil, fmt.Errorf("read product: %w", productNotFound())
	}
	rows, err := r.q.Query(ctx, productWithKeys+`p.id = $2 ORDER BY k.created_at, k.id`, orgID, id)
	if err != nil {
		return nil, fmt.Errorf("read product: %w", err)
	}
	return collectProduct(rows)
}

// productWithKeys reads a product in one round trip: the product on every
// row, with one of its keys, oldest first (none: one row of NULLs). The
// query ends with the condition on p.id and the order.
var productWithKeys = `SELECT ` + store.Qualified(productColumns, "p") + `, ` + store.Qualified(productKeyColumns, "k") + `
	FROM products p LEFT JOIN product_keys k ON k.product_id = p.id
	WHERE p.org_id = $1 AND `

// productOfLicence reads the product of licence $2 as productWithKeys.
var productOfLicence = productWithKeys + `p.id = (SELECT product_id FROM licences WHERE org_id = $1 AND id = $2)
	ORDER BY k.created_at, k.id`

// collectProduct reads the rows of productWithKeys and closes them.
func collectProduct(rows pgx.Rows) (*licentia.Product, error) {
	defer rows.Close()
	var p *licentia.Product
	for rows.Next() {
		var k nullKey
		got, err := scanProduct(store.ScanWith{Row: rows, Extra: k.dest()})
		if err != nil {
			return nil, fmt.Errorf("read product: %w", err)
		}
		if p == nil {
			p = got
		}
		if k.ID != nil {
			p.Keys = append(p.Keys, k.key())
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read product: %w", err)
	}
	if p == nil {
		return nil, fmt.Errorf("read product: %w", productNotFound())
	}
	return p, nil
}

// nullKey is a product key's columns from a LEFT JOIN: all NULL for a
// product without keys.
type nullKey struct {
	ID, ProductID, Fingerprint, MasterFingerprint, Status *string
	PublicKey, Sealed                                     []byte
	CreatedAt, RetiredAt                                  *time.Time
}

// dest is where a row's key columns go, in productKeyColumns' order.
func (k *nullKey) dest() []any {
	return []any{&k.ID, &k.ProductID, &k.PublicKey, &k.Fingerprint, &k.Sealed, &k.MasterFingerprint, &k.Status, &k.CreatedAt, &k.RetiredAt}
}

func (k *nullKey) key() licentia.ProductKey {
	key := licentia.ProductKey{ID: *k.ID, PublicKey: k.PublicKey, Sealed: k.Sealed, RetiredAt: utcPtr(k.RetiredAt)}
	if k.ProductID != nil {
		key.ProductID = *k.ProductID
	}
	if k.Fingerprint != nil {
		key.Fingerprint = *k.Fingerprint
	}
	if k.MasterFingerprint != nil {
		key.MasterFingerprint = *k.MasterFingerprint
	}
	if k.Status != nil {
		key.Status = licentia.KeyStatus(*k.Status)
	}
	if k.CreatedAt != nil {
		key.CreatedAt = k.CreatedAt.UTC()
	}
	return key
}

func (r reader) CountProducts(ctx context.Context, orgID string, since time.Time) (all, createdSince int64, err error) {
	if !isID(orgID) {
		return 0, 0, nil
	}
	err = r.q.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE created_at >= $2) FROM products WHERE org_id = $1`,
		orgID, ms(since)).Scan(&all, &createdSince)
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
	// Text PostgreSQL refuses was never stored, so it is free.
	if !isText(value) || !isText(string(field)) {
		return store.NameFree, nil
	}
	var taken, used bool
	err := r.q.QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM products WHERE `+col+` = $1),
		EXISTS (SELECT 1 FROM product_names WHERE field = $2 AND value = $1)`,
		value, string(field)).Scan(&taken, &used)
	if err != nil {
		return 0, fmt.Errorf("check product %s: %w", field, err)
	}
	switch {
	case taken:
		return store.NameTaken, nil
	case used:
		return store.NameUsedBefore, nil
	}
	return store.NameFree, nil
}

// CreateProduct inserts with ON CONFLICT DO NOTHING rather than catching a
// unique violation: a violation would abort the whole transaction, while a
// row not inserted leaves it as SQLite does. A racing transaction's insert is
// waited for, so of two creating the same id exactly one inserts.
func (t *tx) CreateProduct(ctx context.Context, p *licentia.Product) error {
	tag, err := t.tx.Exec(ctx, `INSERT INTO products (`+productColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING`,
		p.ID, p.OrgID, p.Name, p.KeyPrefix, p.CurrentMajor, p.MachinesPerSeat,
		p.LicenceSigningDomain, p.VerdictSigningDomain, ms(p.CreatedAt), ms(p.UpdatedAt), p.HeartbeatIntervalSeconds,
		string(p.MachineMatch), p.TransfersPer30Days, p.MaxConcurrent, p.LeaseTTLSeconds, p.MaxBorrowHours)
	if err != nil {
		return fmt.Errorf("create product: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return licentia.Errorf(licentia.CodeConflict, "The product id or key prefix is taken.")
	}
	// Ids and prefixes are never reused, even after their product is gone.
	// The id is checked first, so when both were used it is the one named.
	for _, name := range []struct {
		field store.ProductField
		value string
	}{{store.FieldID, p.ID}, {store.FieldKeyPrefix, p.KeyPrefix}} {
		tag, err := t.tx.Exec(ctx, `INSERT INTO product_names (field, value) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
			string(name.field), name.value)
		if err != nil {
			return fmt.Errorf("create product: %w", err)
		}
		if tag.RowsAffected() != 1 {
			return &licentia.Error{Code: licentia.CodeProductReserved, Message: "The product " + string(name.field) + " was used before.",
				Details: map[string]any{"field": string(name.field)}}
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
	if !isProduct(p.OrgID, p.ID) {
		return productNotFound()
	}
	tag, err := t.tx.Exec(ctx, `UPDATE products SET name = $1, current_major = $2, machines_per_seat = $3, updated_at = $4,
		heartbeat_interval_seconds = $5, machine_match = $6, transfers_per_30_days = $7,
		max_concurrent = $10, lease_ttl_seconds = $11, max_borrow_hours = $12 WHERE org_id = $8 AND id = $9`,
		p.Name, p.CurrentMajor, p.MachinesPerSeat, ms(p.UpdatedAt), p.HeartbeatIntervalSeconds,
		string(p.MachineMatch), p.TransfersPer30Days, p.OrgID, p.ID, p.MaxConcurrent, p.LeaseTTLSeconds, p.MaxBorrowHours)
	if err != nil {
		return fmt.Errorf("update product: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return productNotFound()
	}
	return nil
}

func (t *tx) AddProductKey(ctx context.Context, k *licentia.ProductKey) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO product_keys (`+productKeyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		k.ID, k.ProductID, []byte(k.PublicKey), k.Fingerprint, k.Sealed, k.MasterFingerprint, string(k.Status),
		ms(k.CreatedAt), msPtr(k.RetiredAt))
	if err != nil {
		return fmt.Errorf("add product key: %w", err)
	}
	return nil
}

func (t *tx) SetProductKeyStatus(ctx context.Context, productID, keyID string, status licentia.KeyStatus, retiredAt *time.Time) error {
	if !isText(productID) || !isID(keyID) {
		return productKeyNotFound()
	}
	tag, err := t.tx.Exec(ctx, `UPDATE product_keys SET status = $1, retired_at = $2 WHERE product_id = $3 AND id = $4`,
		string(status), msPtr(retiredAt), productID, keyID)
	if err != nil {
		return fmt.Errorf("set product key status: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return productKeyNotFound()
	}
	return nil
}

func (t *tx) ResealProductKey(ctx context.Context, keyID string, sealed []byte, masterFingerprint string) error {
	if !isID(keyID) {
		return productKeyNotFound()
	}
	tag, err := t.tx.Exec(ctx, `UPDATE product_keys SET sealed = $1, master_fingerprint = $2 WHERE id = $3`,
		sealed, masterFingerprint, keyID)
	if err != nil {
		return fmt.Errorf("reseal product key: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return productKeyNotFound()
	}
	return nil
}

// DeleteProduct removes the product; its keys go with it (ON DELETE
// CASCADE), while product_names keeps its id and prefix.
func (t *tx) DeleteProduct(ctx context.Context, orgID, id string) error {
	if !isProduct(orgID, id) {
		return productNotFound()
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM products WHERE org_id = $1 AND id = $2`, orgID, id)
	if err != nil {
		return fmt.Errorf("delete product: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return productNotFound()
	}
	return nil
}

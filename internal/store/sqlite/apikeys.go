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

const apiKeyColumns = `id, org_id, name, prefix, hash, scopes, expires_at, revoked_at, created_at`

func scanAPIKey(row interface{ Scan(...any) error }) (*licentia.APIKey, error) {
	var k licentia.APIKey
	var scopes string
	var expires, revoked, used *int64
	var created int64
	if err := row.Scan(&k.ID, &k.OrgID, &k.Name, &k.Prefix, &k.Hash, &scopes, &expires, &revoked, &created, &used); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, store.NotFound(licentia.CodeNotFound, "API key")
		}
		return nil, err
	}
	k.Scopes = store.SplitScopes(scopes)
	k.ExpiresAt, k.RevokedAt = store.FromMillisPtr(expires), store.FromMillisPtr(revoked)
	k.CreatedAt, k.LastUsedAt = store.FromMillis(created), store.FromMillisPtr(used)
	return &k, nil
}

func (r reader) APIKeyByPrefix(ctx context.Context, prefix string) (*licentia.APIKey, error) {
	k, err := scanAPIKey(r.q.QueryRowContext(ctx, `SELECT `+apiKeyColumns+`, last_used_at FROM api_keys WHERE prefix = ?`, prefix))
	if err != nil {
		return nil, fmt.Errorf("read api key by prefix: %w", err)
	}
	return k, nil
}

func (r reader) APIKey(ctx context.Context, orgID, id string) (*licentia.APIKey, error) {
	k, err := scanAPIKey(r.q.QueryRowContext(ctx, `SELECT `+apiKeyColumns+`, last_used_at FROM api_keys WHERE org_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read api key: %w", err)
	}
	return k, nil
}

func (r reader) APIKeys(ctx context.Context, orgID string) ([]licentia.APIKey, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+apiKeyColumns+`, last_used_at FROM api_keys WHERE org_id = ? ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	defer rows.Close()
	var out []licentia.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, fmt.Errorf("list api keys: %w", err)
		}
		out = append(out, *k)
	}
	return out, rows.Err()
}

func (r reader) CountLiveAPIKeys(ctx context.Context, orgID string, now time.Time) (int64, error) {
	var n int64
	err := r.q.QueryRowContext(ctx, `SELECT count(*) FROM api_keys
		WHERE org_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`,
		orgID, store.Millis(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count api keys: %w", err)
	}
	return n, nil
}

func (t *tx) CreateAPIKey(ctx context.Context, k *licentia.APIKey) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.OrgID, k.Name, k.Prefix, k.Hash, store.JoinScopes(k.Scopes),
		store.MillisPtr(k.ExpiresAt), store.MillisPtr(k.RevokedAt), store.Millis(k.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "An API key with this id or prefix already exists.")
	}
	if err != nil {
		return fmt.Errorf("create api key: %w", err)
	}
	return nil
}

func (t *tx) RevokeAPIKey(ctx context.Context, orgID, id string, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE org_id = ? AND id = ? AND revoked_at IS NULL`,
		store.Millis(at), orgID, id)
	if err != nil {
		return false, fmt.Errorf("revoke api key: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("revoke api key: %w", err)
	}
	if n == 1 {
		return true, nil
	}
	if _, err := t.APIKey(ctx, orgID, id); err != nil {
		return false, err
	}
	return false, nil
}

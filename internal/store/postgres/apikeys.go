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

const apiKeyColumns = `id, org_id, name, prefix, hash, scopes, expires_at, revoked_at, created_at`

func apiKeyNotFound() error { return store.NotFound(licentia.CodeNotFound, "API key") }

func scanAPIKey(row pgx.Row) (*licentia.APIKey, error) {
	var k licentia.APIKey
	var scopes string
	if err := row.Scan(&k.ID, &k.OrgID, &k.Name, &k.Prefix, &k.Hash, &scopes, &k.ExpiresAt, &k.RevokedAt, &k.CreatedAt,
		&k.LastUsedAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, apiKeyNotFound()
		}
		return nil, err
	}
	k.Scopes = store.SplitScopes(scopes)
	k.ExpiresAt, k.RevokedAt, k.CreatedAt = utcPtr(k.ExpiresAt), utcPtr(k.RevokedAt), k.CreatedAt.UTC()
	k.LastUsedAt = utcPtr(k.LastUsedAt)
	return &k, nil
}

func (r reader) APIKeyByPrefix(ctx context.Context, prefix string) (*licentia.APIKey, error) {
	if !isText(prefix) {
		return nil, fmt.Errorf("read api key by prefix: %w", apiKeyNotFound())
	}
	k, err := scanAPIKey(r.q.QueryRow(ctx, `SELECT `+apiKeyColumns+`, last_used_at FROM api_keys WHERE prefix = $1`, prefix))
	if err != nil {
		return nil, fmt.Errorf("read api key by prefix: %w", err)
	}
	return k, nil
}

func (r reader) APIKey(ctx context.Context, orgID, id string) (*licentia.APIKey, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("read api key: %w", apiKeyNotFound())
	}
	k, err := scanAPIKey(r.q.QueryRow(ctx, `SELECT `+apiKeyColumns+`, last_used_at FROM api_keys WHERE org_id = $1 AND id = $2`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read api key: %w", err)
	}
	return k, nil
}

func (r reader) APIKeys(ctx context.Context, orgID string) ([]licentia.APIKey, error) {
	if !isID(orgID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+apiKeyColumns+`, last_used_at FROM api_keys WHERE org_id = $1 ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	out, err := collect(rows, scanAPIKey)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return out, nil
}

func (r reader) CountLiveAPIKeys(ctx context.Context, orgID string, now time.Time) (int64, error) {
	if !isID(orgID) {
		return 0, nil
	}
	var n int64
	err := r.q.QueryRow(ctx, `SELECT count(*) FROM api_keys
		WHERE org_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
		orgID, ms(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count api keys: %w", err)
	}
	return n, nil
}

func (t *tx) CreateAPIKey(ctx context.Context, k *licentia.APIKey) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		k.ID, k.OrgID, k.Name, k.Prefix, k.Hash, store.JoinScopes(k.Scopes),
		msPtr(k.ExpiresAt), msPtr(k.RevokedAt), ms(k.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "An API key with this id or prefix already exists.")
	}
	if err != nil {
		return fmt.Errorf("create api key: %w", err)
	}
	return nil
}

func (t *tx) RevokeAPIKey(ctx context.Context, orgID, id string, at time.Time) (bool, error) {
	if !isID(orgID) || !isID(id) {
		return false, fmt.Errorf("read api key: %w", apiKeyNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE org_id = $2 AND id = $3 AND revoked_at IS NULL`,
		ms(at), orgID, id)
	if err != nil {
		return false, fmt.Errorf("revoke api key: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	// Nothing changed: either the key is already revoked or it is not this
	// organization's, and only the second is an error.
	if _, err := t.APIKey(ctx, orgID, id); err != nil {
		return false, err
	}
	return false, nil
}

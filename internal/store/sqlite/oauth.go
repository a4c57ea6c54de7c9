package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (r reader) OAuthClient(ctx context.Context, id string) (*licentia.OAuthClient, error) {
	var c licentia.OAuthClient
	var uris string
	var created int64
	err := r.q.QueryRowContext(ctx, `SELECT id, client_name, redirect_uris, created_at FROM oauth_clients WHERE id = ?`, id).
		Scan(&c.ID, &c.Name, &uris, &created)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.NotFound(licentia.CodeNotFound, "Client")
	}
	if err != nil {
		return nil, fmt.Errorf("read oauth client: %w", err)
	}
	c.RedirectURIs, c.CreatedAt = strings.Fields(uris), store.FromMillis(created)
	return &c, nil
}

const authorizationCodeColumns = `code_hash, client_id, redirect_uri, code_challenge, resource, org_id, member_id, grant_id,
	expires_at, used_at, created_at`

// authorizationCodeQuery reads a code with its grant, whose end decides
// the exchange.
const authorizationCodeQuery = `SELECT c.code_hash, c.client_id, c.redirect_uri, c.code_challenge, c.resource, c.org_id,
	c.member_id, c.grant_id, c.expires_at, c.used_at, c.created_at, ` + grantColumns + `
	FROM authorization_codes c JOIN grants g ON g.id = c.grant_id WHERE c.code_hash = ?`

func (r reader) AuthorizationCode(ctx context.Context, hash []byte) (*licentia.AuthorizationCode, error) {
	var c licentia.AuthorizationCode
	var expires, created int64
	var used *int64
	var d grantDest
	dest := append([]any{&c.CodeHash, &c.ClientID, &c.RedirectURI, &c.CodeChallenge, &c.Resource, &c.OrgID, &c.MemberID,
		&c.GrantID, &expires, &used, &created}, d.fields()...)
	err := r.q.QueryRowContext(ctx, authorizationCodeQuery, hash).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.NotFound(licentia.CodeNotFound, "Authorization code")
	}
	if err != nil {
		return nil, fmt.Errorf("read authorization code: %w", err)
	}
	c.ExpiresAt, c.UsedAt, c.CreatedAt = store.FromMillis(expires), store.FromMillisPtr(used), store.FromMillis(created)
	c.Grant = d.grant()
	return &c, nil
}

func (t *tx) CreateOAuthClient(ctx context.Context, c *licentia.OAuthClient) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO oauth_clients (id, client_name, redirect_uris, created_at) VALUES (?, ?, ?, ?)`,
		c.ID, c.Name, strings.Join(c.RedirectURIs, " "), store.Millis(c.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The client id is taken.")
	}
	if err != nil {
		return fmt.Errorf("create oauth client: %w", err)
	}
	return nil
}

func (t *tx) CreateAuthorizationCode(ctx context.Context, c *licentia.AuthorizationCode) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO authorization_codes (`+authorizationCodeColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.CodeHash, c.ClientID, c.RedirectURI, c.CodeChallenge, c.Resource, c.OrgID, c.MemberID, c.GrantID,
		store.Millis(c.ExpiresAt), store.MillisPtr(c.UsedAt), store.Millis(c.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The authorization code is taken.")
	}
	if err != nil {
		return fmt.Errorf("create authorization code: %w", err)
	}
	return nil
}

// UseAuthorizationCode changes a code only while used_at is null: SQLite
// runs one writer at a time, so of several exchanges of one code exactly
// one is told it changed.
func (t *tx) UseAuthorizationCode(ctx context.Context, hash []byte, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE authorization_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL`,
		store.Millis(at), hash)
	if err != nil {
		return false, fmt.Errorf("use authorization code: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

func (t *tx) DeleteExpiredAuthorizationCodes(ctx context.Context, now time.Time) (int64, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM authorization_codes WHERE expires_at <= ?`, store.Millis(now))
	if err != nil {
		return 0, fmt.Errorf("delete expired authorization codes: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete expired authorization codes: %w", err)
	}
	return n, nil
}

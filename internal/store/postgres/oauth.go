package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// OAuthClient answers an id PostgreSQL's text cannot hold (a zero byte,
// invalid UTF-8), which a client may send, like a missing one.
func (r reader) OAuthClient(ctx context.Context, id string) (*licentia.OAuthClient, error) {
	if !isText(id) {
		return nil, fmt.Errorf("read oauth client: %w", store.NotFound(licentia.CodeNotFound, "Client"))
	}
	var c licentia.OAuthClient
	var uris string
	err := r.q.QueryRow(ctx, `SELECT id, client_name, redirect_uris, created_at FROM oauth_clients WHERE id = $1`, id).
		Scan(&c.ID, &c.Name, &uris, &c.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.NotFound(licentia.CodeNotFound, "Client")
	}
	if err != nil {
		return nil, fmt.Errorf("read oauth client: %w", err)
	}
	c.RedirectURIs, c.CreatedAt = strings.Fields(uris), c.CreatedAt.UTC()
	return &c, nil
}

const authorizationCodeColumns = `code_hash, client_id, redirect_uri, code_challenge, resource, org_id, member_id, grant_id,
	expires_at, used_at, created_at`

// authorizationCodeQuery reads a code with its grant, whose end decides
// the exchange.
const authorizationCodeQuery = `SELECT c.code_hash, c.client_id, c.redirect_uri, c.code_challenge, c.resource, c.org_id,
	c.member_id, c.grant_id, c.expires_at, c.used_at, c.created_at, ` + grantColumns + `
	FROM authorization_codes c JOIN grants g ON g.id = c.grant_id WHERE c.code_hash = $1`

func (r reader) AuthorizationCode(ctx context.Context, hash []byte) (*licentia.AuthorizationCode, error) {
	var c licentia.AuthorizationCode
	dest := append([]any{&c.CodeHash, &c.ClientID, &c.RedirectURI, &c.CodeChallenge, &c.Resource, &c.OrgID, &c.MemberID,
		&c.GrantID, &c.ExpiresAt, &c.UsedAt, &c.CreatedAt}, grantFields(&c.Grant)...)
	err := r.q.QueryRow(ctx, authorizationCodeQuery, hash).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.NotFound(licentia.CodeNotFound, "Authorization code")
	}
	if err != nil {
		return nil, fmt.Errorf("read authorization code: %w", err)
	}
	c.ExpiresAt, c.UsedAt, c.CreatedAt = c.ExpiresAt.UTC(), utcPtr(c.UsedAt), c.CreatedAt.UTC()
	utcGrant(&c.Grant)
	return &c, nil
}

func (t *tx) CreateOAuthClient(ctx context.Context, c *licentia.OAuthClient) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO oauth_clients (id, client_name, redirect_uris, created_at) VALUES ($1, $2, $3, $4)`,
		c.ID, c.Name, strings.Join(c.RedirectURIs, " "), ms(c.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The client id is taken.")
	}
	if err != nil {
		return fmt.Errorf("create oauth client: %w", err)
	}
	return nil
}

func (t *tx) CreateAuthorizationCode(ctx context.Context, c *licentia.AuthorizationCode) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO authorization_codes (`+authorizationCodeColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		c.CodeHash, c.ClientID, c.RedirectURI, c.CodeChallenge, c.Resource, c.OrgID, c.MemberID, c.GrantID,
		ms(c.ExpiresAt), msPtr(c.UsedAt), ms(c.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The authorization code is taken.")
	}
	if err != nil {
		return fmt.Errorf("create authorization code: %w", err)
	}
	return nil
}

// UseAuthorizationCode changes a code only while used_at is null, so of
// several exchanges of one code exactly one is told it changed: a second
// waits for the first's row lock, then finds used_at set.
func (t *tx) UseAuthorizationCode(ctx context.Context, hash []byte, at time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE authorization_codes SET used_at = $1 WHERE code_hash = $2 AND used_at IS NULL`, ms(at), hash)
	if err != nil {
		return false, fmt.Errorf("use authorization code: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

func (t *tx) DeleteExpiredAuthorizationCodes(ctx context.Context, now time.Time) (int64, error) {
	tag, err := t.tx.Exec(ctx, `DELETE FROM authorization_codes WHERE expires_at <= $1`, ms(now))
	if err != nil {
		return 0, fmt.Errorf("delete expired authorization codes: %w", err)
	}
	return tag.RowsAffected(), nil
}

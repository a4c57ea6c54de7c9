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

// grantColumns reads client_id, null for a grant made by the operator's
// command, as "".
const grantColumns = `g.id, g.org_id, g.member_id, coalesce(g.client_id, ''), g.client_name, g.created_at, g.revoked_at,
	g.last_used_at`

func grantNotFound() error { return store.NotFound(licentia.CodeNotFound, "Grant") }

func grantFields(g *licentia.Grant) []any {
	return []any{&g.ID, &g.OrgID, &g.MemberID, &g.ClientID, &g.ClientName, &g.CreatedAt, &g.RevokedAt, &g.LastUsedAt}
}

// utcGrant converts a grant's times read back to UTC.
func utcGrant(g *licentia.Grant) {
	g.CreatedAt, g.RevokedAt, g.LastUsedAt = g.CreatedAt.UTC(), utcPtr(g.RevokedAt), utcPtr(g.LastUsedAt)
}

func scanGrant(row pgx.Row) (*licentia.Grant, error) {
	var g licentia.Grant
	if err := row.Scan(grantFields(&g)...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, grantNotFound()
		}
		return nil, err
	}
	utcGrant(&g)
	return &g, nil
}

// assistantTokenQuery reads a token and its grant by one look-up of the
// token's primary key: it runs on every request of an AI assistant.
const assistantTokenQuery = `SELECT t.token_hash, t.grant_id, t.kind, t.expires_at, t.used_at, t.created_at, ` + grantColumns + `
	FROM assistant_tokens t JOIN grants g ON g.id = t.grant_id WHERE t.token_hash = $1`

func (r reader) AssistantToken(ctx context.Context, hash []byte) (*licentia.AssistantToken, error) {
	var t licentia.AssistantToken
	dest := append([]any{&t.TokenHash, &t.GrantID, &t.Kind, &t.ExpiresAt, &t.UsedAt, &t.CreatedAt}, grantFields(&t.Grant)...)
	if err := r.q.QueryRow(ctx, assistantTokenQuery, hash).Scan(dest...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("read assistant token: %w", store.NotFound(licentia.CodeNotFound, "Token"))
		}
		return nil, fmt.Errorf("read assistant token: %w", err)
	}
	t.ExpiresAt, t.UsedAt, t.CreatedAt = t.ExpiresAt.UTC(), utcPtr(t.UsedAt), t.CreatedAt.UTC()
	utcGrant(&t.Grant)
	return &t, nil
}

func (r reader) Grants(ctx context.Context, orgID, memberID string) ([]licentia.Grant, error) {
	if !isID(orgID) || !isID(memberID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+grantColumns+` FROM grants g
		WHERE g.org_id = $1 AND g.member_id = $2 AND g.revoked_at IS NULL ORDER BY g.created_at, g.id`, orgID, memberID)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	out, err := collect(rows, scanGrant)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	return out, nil
}

func (t *tx) CreateGrant(ctx context.Context, g *licentia.Grant) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO grants (id, org_id, member_id, client_id, client_name, created_at, revoked_at)
		VALUES ($1, $2, $3, nullif($4, ''), $5, $6, $7)`,
		g.ID, g.OrgID, g.MemberID, g.ClientID, g.ClientName, ms(g.CreatedAt), msPtr(g.RevokedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The grant id is taken.")
	}
	if err != nil {
		return fmt.Errorf("create grant: %w", err)
	}
	return nil
}

func (t *tx) CreateAssistantToken(ctx context.Context, at *licentia.AssistantToken) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO assistant_tokens (token_hash, grant_id, kind, expires_at, used_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		at.TokenHash, at.GrantID, string(at.Kind), ms(at.ExpiresAt), msPtr(at.UsedAt), ms(at.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create assistant token: %w", err)
	}
	return nil
}

// UseAssistantToken changes a token only while used_at is null, so of
// several exchanges of one refresh token exactly one is told it changed: a
// second waits for the first's row lock, then finds used_at set. A missing
// token changes nothing.
func (t *tx) UseAssistantToken(ctx context.Context, hash []byte, at time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE assistant_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL`, ms(at), hash)
	if err != nil {
		return false, fmt.Errorf("use assistant token: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// RevokeGrant holds the grant to its member: another member's grant, or
// another organization's, answers like a missing one. An ended grant is
// found but not changed.
func (t *tx) RevokeGrant(ctx context.Context, orgID, memberID, id string, at time.Time) (bool, error) {
	if !isID(orgID) || !isID(memberID) || !isID(id) {
		return false, fmt.Errorf("revoke grant: %w", grantNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE grants SET revoked_at = $1 WHERE org_id = $2 AND member_id = $3 AND id = $4 AND revoked_at IS NULL`,
		ms(at), orgID, memberID, id)
	if err != nil {
		return false, fmt.Errorf("revoke grant: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	var one int
	err = t.tx.QueryRow(ctx, `SELECT 1 FROM grants WHERE org_id = $1 AND member_id = $2 AND id = $3`, orgID, memberID, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("revoke grant: %w", grantNotFound())
	}
	if err != nil {
		return false, fmt.Errorf("revoke grant: %w", err)
	}
	return false, nil
}

func (t *tx) RevokeMemberGrants(ctx context.Context, orgID, memberID string, at time.Time) (int64, error) {
	if !isID(orgID) || !isID(memberID) {
		return 0, nil
	}
	tag, err := t.tx.Exec(ctx, `UPDATE grants SET revoked_at = $1 WHERE org_id = $2 AND member_id = $3 AND revoked_at IS NULL`,
		ms(at), orgID, memberID)
	if err != nil {
		return 0, fmt.Errorf("revoke member grants: %w", err)
	}
	return tag.RowsAffected(), nil
}

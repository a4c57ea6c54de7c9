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

// grantColumns reads client_id, null for a grant made by the operator's
// command, as "".
const grantColumns = `g.id, g.org_id, g.member_id, coalesce(g.client_id, ''), g.client_name, g.created_at, g.revoked_at,
	g.last_used_at`

func grantNotFound() error { return store.NotFound(licentia.CodeNotFound, "Grant") }

// grantDest holds what a grant's columns scan into, so a token and its
// grant are read by one Scan.
type grantDest struct {
	g       licentia.Grant
	created int64
	revoked sql.Null[int64]
	used    sql.Null[int64]
}

func (d *grantDest) fields() []any {
	return []any{&d.g.ID, &d.g.OrgID, &d.g.MemberID, &d.g.ClientID, &d.g.ClientName, &d.created, &d.revoked, &d.used}
}

func (d *grantDest) grant() licentia.Grant {
	d.g.CreatedAt, d.g.RevokedAt, d.g.LastUsedAt = store.FromMillis(d.created), instant(d.revoked), instant(d.used)
	return d.g
}

func scanGrant(row interface{ Scan(...any) error }) (*licentia.Grant, error) {
	var d grantDest
	if err := row.Scan(d.fields()...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, grantNotFound()
		}
		return nil, err
	}
	g := d.grant()
	return &g, nil
}

// assistantTokenQuery reads a token and its grant by one look-up of the
// token's primary key: it runs on every request of an AI assistant.
const assistantTokenQuery = `SELECT t.token_hash, t.grant_id, t.kind, t.expires_at, t.used_at, t.created_at, ` + grantColumns + `
	FROM assistant_tokens t JOIN grants g ON g.id = t.grant_id WHERE t.token_hash = ?`

func (r reader) AssistantToken(ctx context.Context, hash []byte) (*licentia.AssistantToken, error) {
	var t licentia.AssistantToken
	var kind string
	var expires, created int64
	var used sql.Null[int64]
	var d grantDest
	dest := append([]any{&t.TokenHash, &t.GrantID, &kind, &expires, &used, &created}, d.fields()...)
	if err := r.q.QueryRowContext(ctx, assistantTokenQuery, hash).Scan(dest...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("read assistant token: %w", store.NotFound(licentia.CodeNotFound, "Token"))
		}
		return nil, fmt.Errorf("read assistant token: %w", err)
	}
	t.Kind = licentia.TokenKind(kind)
	t.ExpiresAt, t.UsedAt, t.CreatedAt = store.FromMillis(expires), instant(used), store.FromMillis(created)
	t.Grant = d.grant()
	return &t, nil
}

func (r reader) Grants(ctx context.Context, orgID, memberID string) ([]licentia.Grant, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+grantColumns+` FROM grants g
		WHERE g.org_id = ? AND g.member_id = ? AND g.revoked_at IS NULL ORDER BY g.created_at, g.id`, orgID, memberID)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	defer rows.Close()
	var out []licentia.Grant
	for rows.Next() {
		g, err := scanGrant(rows)
		if err != nil {
			return nil, fmt.Errorf("list grants: %w", err)
		}
		out = append(out, *g)
	}
	return out, rows.Err()
}

func (t *tx) CreateGrant(ctx context.Context, g *licentia.Grant) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO grants (id, org_id, member_id, client_id, client_name, created_at, revoked_at)
		VALUES (?, ?, ?, nullif(?, ''), ?, ?, ?)`,
		g.ID, g.OrgID, g.MemberID, g.ClientID, g.ClientName, store.Millis(g.CreatedAt), store.MillisPtr(g.RevokedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The grant id is taken.")
	}
	if err != nil {
		return fmt.Errorf("create grant: %w", err)
	}
	return nil
}

func (t *tx) CreateAssistantToken(ctx context.Context, at *licentia.AssistantToken) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO assistant_tokens (token_hash, grant_id, kind, expires_at, used_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`,
		at.TokenHash, at.GrantID, string(at.Kind), store.Millis(at.ExpiresAt), store.MillisPtr(at.UsedAt), store.Millis(at.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create assistant token: %w", err)
	}
	return nil
}

// UseAssistantToken changes a token only while used_at is null, so of
// several exchanges of one refresh token exactly one is told it changed.
// A missing token changes nothing.
func (t *tx) UseAssistantToken(ctx context.Context, hash []byte, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE assistant_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL`,
		store.Millis(at), hash)
	if err != nil {
		return false, fmt.Errorf("use assistant token: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// RevokeGrant holds the grant to its member: another member's grant, or
// another organization's, answers like a missing one. An ended grant is
// found but not changed.
func (t *tx) RevokeGrant(ctx context.Context, orgID, memberID, id string, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE grants SET revoked_at = ? WHERE org_id = ? AND member_id = ? AND id = ? AND revoked_at IS NULL`,
		store.Millis(at), orgID, memberID, id)
	if err != nil {
		return false, fmt.Errorf("revoke grant: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	var one int
	err = t.tx.QueryRowContext(ctx, `SELECT 1 FROM grants WHERE org_id = ? AND member_id = ? AND id = ?`, orgID, memberID, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("revoke grant: %w", grantNotFound())
	}
	if err != nil {
		return false, fmt.Errorf("revoke grant: %w", err)
	}
	return false, nil
}

func (t *tx) RevokeMemberGrants(ctx context.Context, orgID, memberID string, at time.Time) (int64, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE grants SET revoked_at = ? WHERE org_id = ? AND member_id = ? AND revoked_at IS NULL`,
		store.Millis(at), orgID, memberID)
	if err != nil {
		return 0, fmt.Errorf("revoke member grants: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("revoke member grants: %w", err)
	}
	return n, nil
}

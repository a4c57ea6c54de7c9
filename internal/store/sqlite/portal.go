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

const portalLinkColumns = `id, org_id, token_hash, email, created_at, expires_at, used_at`

func portalLinkNotFound() error { return store.NotFound(licentia.CodeNotFound, "Sign-in link") }

func scanPortalLink(row interface{ Scan(...any) error }) (*licentia.PortalLink, error) {
	var l licentia.PortalLink
	var created, expires int64
	var used *int64
	err := row.Scan(&l.ID, &l.OrgID, &l.TokenHash, &l.Email, &created, &expires, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, portalLinkNotFound()
	}
	if err != nil {
		return nil, err
	}
	l.CreatedAt, l.ExpiresAt, l.UsedAt = store.FromMillis(created), store.FromMillis(expires), store.FromMillisPtr(used)
	return &l, nil
}

func (r reader) PortalLink(ctx context.Context, orgID, id string) (*licentia.PortalLink, error) {
	l, err := scanPortalLink(r.q.QueryRowContext(ctx, `SELECT `+portalLinkColumns+` FROM portal_links WHERE org_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read sign-in link: %w", err)
	}
	return l, nil
}

func (r reader) PortalLinkByToken(ctx context.Context, hash []byte) (*licentia.PortalLink, error) {
	l, err := scanPortalLink(r.q.QueryRowContext(ctx, `SELECT `+portalLinkColumns+` FROM portal_links WHERE token_hash = ?`, hash))
	if err != nil {
		return nil, fmt.Errorf("read sign-in link by token: %w", err)
	}
	return l, nil
}

func (t *tx) CreatePortalLink(ctx context.Context, l *licentia.PortalLink) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO portal_links (`+portalLinkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.OrgID, l.TokenHash, l.Email, store.Millis(l.CreatedAt), store.Millis(l.ExpiresAt), store.MillisPtr(l.UsedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The sign-in link id or token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create sign-in link: %w", err)
	}
	return nil
}

func (t *tx) UsePortalLink(ctx context.Context, hash []byte, at time.Time) (*licentia.PortalLink, error) {
	l, err := scanPortalLink(t.tx.QueryRowContext(ctx, `UPDATE portal_links SET used_at = ?
		WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING `+portalLinkColumns,
		store.Millis(at), hash, store.Millis(at)))
	if err != nil {
		return nil, fmt.Errorf("use sign-in link: %w", err)
	}
	return l, nil
}

const portalSessionColumns = `id, org_id, token_hash, email, created_at, expires_at`

func (r reader) PortalSessionByToken(ctx context.Context, hash []byte) (*licentia.PortalSession, error) {
	var s licentia.PortalSession
	var created, expires int64
	err := r.q.QueryRowContext(ctx, `SELECT `+portalSessionColumns+` FROM portal_sessions WHERE token_hash = ?`, hash).
		Scan(&s.ID, &s.OrgID, &s.TokenHash, &s.Email, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.NotFound(licentia.CodeNotFound, "Session")
	}
	if err != nil {
		return nil, fmt.Errorf("read portal session by token: %w", err)
	}
	s.CreatedAt, s.ExpiresAt = store.FromMillis(created), store.FromMillis(expires)
	return &s, nil
}

func (t *tx) CreatePortalSession(ctx context.Context, s *licentia.PortalSession) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO portal_sessions (`+portalSessionColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		s.ID, s.OrgID, s.TokenHash, s.Email, store.Millis(s.CreatedAt), store.Millis(s.ExpiresAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The session id or token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create portal session: %w", err)
	}
	return nil
}

func (t *tx) DeletePortalSession(ctx context.Context, id string) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM portal_sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete portal session: %w", err)
	}
	return nil
}

func (t *tx) DeleteStalePortal(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	for _, q := range []string{`DELETE FROM portal_links WHERE expires_at <= ?`, `DELETE FROM portal_sessions WHERE expires_at <= ?`} {
		res, err := t.tx.ExecContext(ctx, q, store.Millis(now))
		if err != nil {
			return 0, fmt.Errorf("delete stale portal links and sessions: %w", err)
		}
		c, _ := res.RowsAffected()
		n += c
	}
	return n, nil
}

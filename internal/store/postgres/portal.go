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

const portalLinkColumns = `id, org_id, token_hash, email, created_at, expires_at, used_at`

func portalLinkNotFound() error { return store.NotFound(licentia.CodeNotFound, "Sign-in link") }

func scanPortalLink(row pgx.Row) (*licentia.PortalLink, error) {
	var l licentia.PortalLink
	err := row.Scan(&l.ID, &l.OrgID, &l.TokenHash, &l.Email, &l.CreatedAt, &l.ExpiresAt, &l.UsedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, portalLinkNotFound()
	}
	if err != nil {
		return nil, err
	}
	l.CreatedAt, l.ExpiresAt, l.UsedAt = l.CreatedAt.UTC(), l.ExpiresAt.UTC(), utcPtr(l.UsedAt)
	return &l, nil
}

func (r reader) PortalLink(ctx context.Context, orgID, id string) (*licentia.PortalLink, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("read sign-in link: %w", portalLinkNotFound())
	}
	l, err := scanPortalLink(r.q.QueryRow(ctx, `SELECT `+portalLinkColumns+` FROM portal_links WHERE org_id = $1 AND id = $2`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read sign-in link: %w", err)
	}
	return l, nil
}

func (r reader) PortalLinkByToken(ctx context.Context, hash []byte) (*licentia.PortalLink, error) {
	l, err := scanPortalLink(r.q.QueryRow(ctx, `SELECT `+portalLinkColumns+` FROM portal_links WHERE token_hash = $1`, hash))
	if err != nil {
		return nil, fmt.Errorf("read sign-in link by token: %w", err)
	}
	return l, nil
}

func (t *tx) CreatePortalLink(ctx context.Context, l *licentia.PortalLink) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO portal_links (`+portalLinkColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		l.ID, l.OrgID, l.TokenHash, l.Email, ms(l.CreatedAt), ms(l.ExpiresAt), msPtr(l.UsedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The sign-in link id or token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create sign-in link: %w", err)
	}
	return nil
}

// UsePortalLink is used once as UseLoginLink is: the second of two racing
// updates checks used_at again once the first has committed, and matches
// nothing.
func (t *tx) UsePortalLink(ctx context.Context, hash []byte, at time.Time) (*licentia.PortalLink, error) {
	l, err := scanPortalLink(t.tx.QueryRow(ctx, `UPDATE portal_links SET used_at = $1
		WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1 RETURNING `+portalLinkColumns, ms(at), hash))
	if err != nil {
		return nil, fmt.Errorf("use sign-in link: %w", err)
	}
	return l, nil
}

const portalSessionColumns = `id, org_id, token_hash, email, created_at, expires_at`

func (r reader) PortalSessionByToken(ctx context.Context, hash []byte) (*licentia.PortalSession, error) {
	var s licentia.PortalSession
	err := r.q.QueryRow(ctx, `SELECT `+portalSessionColumns+` FROM portal_sessions WHERE token_hash = $1`, hash).
		Scan(&s.ID, &s.OrgID, &s.TokenHash, &s.Email, &s.CreatedAt, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.NotFound(licentia.CodeNotFound, "Session")
	}
	if err != nil {
		return nil, fmt.Errorf("read portal session by token: %w", err)
	}
	s.CreatedAt, s.ExpiresAt = s.CreatedAt.UTC(), s.ExpiresAt.UTC()
	return &s, nil
}

func (t *tx) CreatePortalSession(ctx context.Context, s *licentia.PortalSession) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO portal_sessions (`+portalSessionColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		s.ID, s.OrgID, s.TokenHash, s.Email, ms(s.CreatedAt), ms(s.ExpiresAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The session id or token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create portal session: %w", err)
	}
	return nil
}

func (t *tx) DeletePortalSession(ctx context.Context, id string) error {
	if !isID(id) {
		return nil
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM portal_sessions WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete portal session: %w", err)
	}
	return nil
}

func (t *tx) DeleteStalePortal(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	for _, q := range []string{`DELETE FROM portal_links WHERE expires_at <= $1`, `DELETE FROM portal_sessions WHERE expires_at <= $1`} {
		tag, err := t.tx.Exec(ctx, q, ms(now))
		if err != nil {
			return 0, fmt.Errorf("delete stale portal links and sessions: %w", err)
		}
		n += tag.RowsAffected()
	}
	return n, nil
}

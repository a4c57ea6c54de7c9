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

const accountColumns = `id, email, password_hash, created_at, updated_at`

func accountNotFound() error { return store.NotFound(licentia.CodeNotFound, "Account") }

func scanAccount(row pgx.Row) (*licentia.Account, error) {
	var a licentia.Account
	var hash *string
	err := row.Scan(&a.ID, &a.Email, &hash, &a.CreatedAt, &a.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, accountNotFound()
	}
	if err != nil {
		return nil, err
	}
	if hash != nil {
		a.PasswordHash = *hash
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return &a, nil
}

// nullString stores "" as NULL: an account without a password has none.
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (r reader) Account(ctx context.Context, id string) (*licentia.Account, error) {
	if !isID(id) {
		return nil, fmt.Errorf("read account: %w", accountNotFound())
	}
	a, err := scanAccount(r.q.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("read account: %w", err)
	}
	return a, nil
}

func (r reader) AccountByEmail(ctx context.Context, email string) (*licentia.Account, error) {
	if !isText(email) {
		return nil, fmt.Errorf("read account by email: %w", accountNotFound())
	}
	a, err := scanAccount(r.q.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts
		WHERE lower(email COLLATE "C") = lower($1::text COLLATE "C")`, email))
	if err != nil {
		return nil, fmt.Errorf("read account by email: %w", err)
	}
	return a, nil
}

func (t *tx) CreateAccount(ctx context.Context, a *licentia.Account) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO accounts (`+accountColumns+`) VALUES ($1, $2, $3, $4, $5)`,
		a.ID, a.Email, nullString(a.PasswordHash), ms(a.CreatedAt), ms(a.UpdatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "An account with this address already exists.")
	}
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	return nil
}

func (t *tx) SetAccountPassword(ctx context.Context, id, passwordHash string, at time.Time) error {
	if !isID(id) {
		return fmt.Errorf("set account password: %w", accountNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE accounts SET password_hash = $1, updated_at = $2 WHERE id = $3`,
		nullString(passwordHash), ms(at), id)
	if err != nil {
		return fmt.Errorf("set account password: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("set account password: %w", accountNotFound())
	}
	return nil
}

const loginLinkColumns = `id, org_id, member_id, token_hash, expires_at, used_at, created_at`

func loginLinkNotFound() error { return store.NotFound(licentia.CodeNotFound, "Login link") }

func (r reader) LoginLinkByToken(ctx context.Context, hash []byte) (*licentia.LoginLink, error) {
	var l licentia.LoginLink
	err := r.q.QueryRow(ctx, `SELECT `+loginLinkColumns+` FROM login_links WHERE token_hash = $1`, hash).
		Scan(&l.ID, &l.OrgID, &l.MemberID, &l.TokenHash, &l.ExpiresAt, &l.UsedAt, &l.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		err = loginLinkNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("read login link by token: %w", err)
	}
	l.ExpiresAt, l.UsedAt, l.CreatedAt = l.ExpiresAt.UTC(), utcPtr(l.UsedAt), l.CreatedAt.UTC()
	return &l, nil
}

func (t *tx) CreateLoginLink(ctx context.Context, l *licentia.LoginLink) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO login_links (`+loginLinkColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		l.ID, l.OrgID, l.MemberID, l.TokenHash, ms(l.ExpiresAt), msPtr(l.UsedAt), ms(l.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The login link id or token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create login link: %w", err)
	}
	return nil
}

// UseLoginLink is used once as AcceptInvitation is: the second of two
// racing updates checks used_at again once the first has committed.
func (t *tx) UseLoginLink(ctx context.Context, id string, at time.Time) (bool, error) {
	if !isID(id) {
		return false, fmt.Errorf("use login link: %w", loginLinkNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE login_links SET used_at = $1 WHERE id = $2 AND used_at IS NULL`, ms(at), id)
	if err != nil {
		return false, fmt.Errorf("use login link: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	var one int
	err = t.tx.QueryRow(ctx, `SELECT 1 FROM login_links WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		err = loginLinkNotFound()
	}
	if err != nil {
		return false, fmt.Errorf("use login link: %w", err)
	}
	return false, nil
}

const sessionColumns = `id, token_hash, account_id, org_id, created_at, last_seen_at, expires_at`

func sessionNotFound() error { return store.NotFound(licentia.CodeNotFound, "Session") }

func (r reader) SessionByToken(ctx context.Context, hash []byte) (*licentia.Session, error) {
	var s licentia.Session
	err := r.q.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE token_hash = $1`, hash).
		Scan(&s.ID, &s.TokenHash, &s.AccountID, &s.OrgID, &s.CreatedAt, &s.LastSeenAt, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		err = sessionNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("read session by token: %w", err)
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = s.CreatedAt.UTC(), s.LastSeenAt.UTC(), s.ExpiresAt.UTC()
	return &s, nil
}

func (t *tx) CreateSession(ctx context.Context, s *licentia.Session) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		s.ID, s.TokenHash, s.AccountID, s.OrgID, ms(s.CreatedAt), ms(s.LastSeenAt), ms(s.ExpiresAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The session id or token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

func (t *tx) TouchSession(ctx context.Context, id string, at time.Time) error {
	if !isID(id) {
		return fmt.Errorf("touch session: %w", sessionNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE sessions SET last_seen_at = $1 WHERE id = $2`, ms(at), id)
	if err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("touch session: %w", sessionNotFound())
	}
	return nil
}

func (t *tx) SetSessionOrganization(ctx context.Context, id, orgID string) error {
	if !isID(id) {
		return fmt.Errorf("set session organization: %w", sessionNotFound())
	}
	if !isID(orgID) {
		return fmt.Errorf("set session organization: %w", orgNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE sessions SET org_id = $1 WHERE id = $2`, orgID, id)
	if err != nil {
		return fmt.Errorf("set session organization: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("set session organization: %w", sessionNotFound())
	}
	return nil
}

func (t *tx) DeleteSession(ctx context.Context, id string) error {
	if !isID(id) {
		return nil
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

func (t *tx) DeleteAccountSessions(ctx context.Context, accountID string) (int64, error) {
	if !isID(accountID) {
		return 0, nil
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM sessions WHERE account_id = $1`, accountID)
	if err != nil {
		return 0, fmt.Errorf("delete account sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}

func (t *tx) DeleteStaleSessions(ctx context.Context, idleBefore, now time.Time) (int64, error) {
	tag, err := t.tx.Exec(ctx, `DELETE FROM sessions WHERE last_seen_at < $1 OR expires_at <= $2`, ms(idleBefore), ms(now))
	if err != nil {
		return 0, fmt.Errorf("delete stale sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}

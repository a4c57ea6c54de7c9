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

const accountColumns = `id, email, password_hash, created_at, updated_at`

func accountNotFound() error { return store.NotFound(licentia.CodeNotFound, "Account") }

func scanAccount(row interface{ Scan(...any) error }) (*licentia.Account, error) {
	var a licentia.Account
	var hash sql.NullString
	var created, updated int64
	err := row.Scan(&a.ID, &a.Email, &hash, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, accountNotFound()
	}
	if err != nil {
		return nil, err
	}
	a.PasswordHash = hash.String
	a.CreatedAt, a.UpdatedAt = store.FromMillis(created), store.FromMillis(updated)
	return &a, nil
}

// nullString stores "" as NULL: an account without a password has none.
func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func (r reader) Account(ctx context.Context, id string) (*licentia.Account, error) {
	a, err := scanAccount(r.q.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("read account: %w", err)
	}
	return a, nil
}

func (r reader) AccountByEmail(ctx context.Context, email string) (*licentia.Account, error) {
	a, err := scanAccount(r.q.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE lower(email) = lower(?)`, email))
	if err != nil {
		return nil, fmt.Errorf("read account by email: %w", err)
	}
	return a, nil
}

func (t *tx) CreateAccount(ctx context.Context, a *licentia.Account) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO accounts (`+accountColumns+`) VALUES (?, ?, ?, ?, ?)`,
		a.ID, a.Email, nullString(a.PasswordHash), store.Millis(a.CreatedAt), store.Millis(a.UpdatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "An account with this address already exists.")
	}
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	return nil
}

func (t *tx) SetAccountPassword(ctx context.Context, id, passwordHash string, at time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE accounts SET password_hash = ?, updated_at = ? WHERE id = ?`,
		nullString(passwordHash), store.Millis(at), id)
	if err != nil {
		return fmt.Errorf("set account password: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("set account password: %w", accountNotFound())
	}
	return nil
}

const loginLinkColumns = `id, org_id, member_id, token_hash, expires_at, used_at, created_at`

func loginLinkNotFound() error { return store.NotFound(licentia.CodeNotFound, "Login link") }

func (r reader) LoginLinkByToken(ctx context.Context, hash []byte) (*licentia.LoginLink, error) {
	var l licentia.LoginLink
	var expires, created int64
	var used *int64
	err := r.q.QueryRowContext(ctx, `SELECT `+loginLinkColumns+` FROM login_links WHERE token_hash = ?`, hash).
		Scan(&l.ID, &l.OrgID, &l.MemberID, &l.TokenHash, &expires, &used, &created)
	if errors.Is(err, sql.ErrNoRows) {
		err = loginLinkNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("read login link by token: %w", err)
	}
	l.ExpiresAt, l.UsedAt, l.CreatedAt = store.FromMillis(expires), store.FromMillisPtr(used), store.FromMillis(created)
	return &l, nil
}

func (t *tx) CreateLoginLink(ctx context.Context, l *licentia.LoginLink) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO login_links (`+loginLinkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.OrgID, l.MemberID, l.TokenHash, store.Millis(l.ExpiresAt), store.MillisPtr(l.UsedAt), store.Millis(l.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The login link id or token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create login link: %w", err)
	}
	return nil
}

func (t *tx) UseLoginLink(ctx context.Context, id string, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE login_links SET used_at = ? WHERE id = ? AND used_at IS NULL`, store.Millis(at), id)
	if err != nil {
		return false, fmt.Errorf("use login link: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	var one int
	err = t.tx.QueryRowContext(ctx, `SELECT 1 FROM login_links WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
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
	var created, seen, expires int64
	err := r.q.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE token_hash = ?`, hash).
		Scan(&s.ID, &s.TokenHash, &s.AccountID, &s.OrgID, &created, &seen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		err = sessionNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("read session by token: %w", err)
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = store.FromMillis(created), store.FromMillis(seen), store.FromMillis(expires)
	return &s, nil
}

func (t *tx) CreateSession(ctx context.Context, s *licentia.Session) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.TokenHash, s.AccountID, s.OrgID, store.Millis(s.CreatedAt), store.Millis(s.LastSeenAt), store.Millis(s.ExpiresAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The session id or token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

func (t *tx) TouchSession(ctx context.Context, id string, at time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE sessions SET last_seen_at = ? WHERE id = ?`, store.Millis(at), id)
	if err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("touch session: %w", sessionNotFound())
	}
	return nil
}

func (t *tx) SetSessionOrganization(ctx context.Context, id, orgID string) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE sessions SET org_id = ? WHERE id = ?`, orgID, id)
	if err != nil {
		return fmt.Errorf("set session organization: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("set session organization: %w", sessionNotFound())
	}
	return nil
}

func (t *tx) DeleteSession(ctx context.Context, id string) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

func (t *tx) DeleteAccountSessions(ctx context.Context, accountID string) (int64, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM sessions WHERE account_id = ?`, accountID)
	if err != nil {
		return 0, fmt.Errorf("delete account sessions: %w", err)
	}
	return res.RowsAffected()
}

func (t *tx) DeleteStaleSessions(ctx context.Context, idleBefore, now time.Time) (int64, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM sessions WHERE last_seen_at < ? OR expires_at <= ?`,
		store.Millis(idleBefore), store.Millis(now))
	if err != nil {
		return 0, fmt.Errorf("delete stale sessions: %w", err)
	}
	return res.RowsAffected()
}

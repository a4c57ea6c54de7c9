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

// Addresses are compared as members_email compares them: SQLite's lower()
// folds ASCII letters only, and the PostgreSQL engine folds exactly those.

const memberColumns = `id, org_id, email, role, created_at`

func memberNotFound() error { return store.NotFound(licentia.CodeMemberNotFound, "Member") }

func scanMember(row interface{ Scan(...any) error }) (*licentia.Member, error) {
	var m licentia.Member
	var created int64
	err := row.Scan(&m.ID, &m.OrgID, &m.Email, &m.Role, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memberNotFound()
	}
	if err != nil {
		return nil, err
	}
	m.CreatedAt = store.FromMillis(created)
	return &m, nil
}

func (r reader) Members(ctx context.Context, orgID string) ([]licentia.Member, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+memberColumns+` FROM members WHERE org_id = ? ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	defer rows.Close()
	var out []licentia.Member
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, fmt.Errorf("list members: %w", err)
		}
		out = append(out, *m)
	}
	return out, rows.Err()
}

func (r reader) Member(ctx context.Context, orgID, id string) (*licentia.Member, error) {
	m, err := scanMember(r.q.QueryRowContext(ctx, `SELECT `+memberColumns+` FROM members WHERE org_id = ? AND id = ?`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read member: %w", err)
	}
	return m, nil
}

func (r reader) MemberByEmail(ctx context.Context, orgID, email string) (*licentia.Member, error) {
	m, err := scanMember(r.q.QueryRowContext(ctx, `SELECT `+memberColumns+` FROM members WHERE org_id = ? AND lower(email) = lower(?)`,
		orgID, email))
	if err != nil {
		return nil, fmt.Errorf("read member by email: %w", err)
	}
	return m, nil
}

func (r reader) Memberships(ctx context.Context, email string) ([]licentia.Membership, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT m.id, m.org_id, m.email, m.role, m.created_at, o.name, o.slug
		FROM members m JOIN organizations o ON o.id = m.org_id
		WHERE lower(m.email) = lower(?) ORDER BY o.name, o.id`, email)
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	defer rows.Close()
	var out []licentia.Membership
	for rows.Next() {
		var ms licentia.Membership
		var created int64
		if err := rows.Scan(&ms.ID, &ms.OrgID, &ms.Email, &ms.Role, &created, &ms.OrgName, &ms.OrgSlug); err != nil {
			return nil, fmt.Errorf("list memberships: %w", err)
		}
		ms.CreatedAt = store.FromMillis(created)
		out = append(out, ms)
	}
	return out, rows.Err()
}

func (t *tx) CreateMember(ctx context.Context, m *licentia.Member) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO members (`+memberColumns+`) VALUES (?, ?, ?, ?, ?)`,
		m.ID, m.OrgID, m.Email, m.Role, store.Millis(m.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "This address is already a member.")
	}
	if err != nil {
		return fmt.Errorf("create member: %w", err)
	}
	return nil
}

func (t *tx) SetMemberRole(ctx context.Context, orgID, id string, role licentia.Role) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE members SET role = ? WHERE org_id = ? AND id = ?`, role, orgID, id)
	if err != nil {
		return fmt.Errorf("set member role: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("set member role: %w", memberNotFound())
	}
	return nil
}

// DeleteMember also deletes the member's login links: nothing references a
// member by foreign key, and a link must not outlive the member it signs in.
func (t *tx) DeleteMember(ctx context.Context, orgID, id string) error {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM members WHERE org_id = ? AND id = ?`, orgID, id)
	if err != nil {
		return fmt.Errorf("delete member: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("delete member: %w", memberNotFound())
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM login_links WHERE org_id = ? AND member_id = ?`, orgID, id); err != nil {
		return fmt.Errorf("delete member: %w", err)
	}
	return nil
}

const invitationColumns = `id, org_id, email, role, expires_at, created_at, accepted_at, revoked_at, token_hash, invited_by`

func invitationNotFound() error {
	return store.NotFound(licentia.CodeInvitationNotFound, "Invitation")
}

// scanInvitation leaves sql.ErrNoRows as it is: a missing invitation answers
// invitation_not_found by id but not_found by token.
func scanInvitation(row interface{ Scan(...any) error }) (*licentia.Invitation, error) {
	var inv licentia.Invitation
	var expires, created int64
	var accepted, revoked *int64
	if err := row.Scan(&inv.ID, &inv.OrgID, &inv.Email, &inv.Role, &expires, &created, &accepted, &revoked,
		&inv.TokenHash, &inv.InvitedBy); err != nil {
		return nil, err
	}
	inv.ExpiresAt, inv.CreatedAt = store.FromMillis(expires), store.FromMillis(created)
	inv.AcceptedAt, inv.RevokedAt = store.FromMillisPtr(accepted), store.FromMillisPtr(revoked)
	return &inv, nil
}

func (r reader) PendingInvitations(ctx context.Context, orgID string, now time.Time) ([]licentia.Invitation, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+invitationColumns+` FROM invitations
		WHERE org_id = ? AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?
		ORDER BY created_at, id`, orgID, store.Millis(now))
	if err != nil {
		return nil, fmt.Errorf("list invitations: %w", err)
	}
	defer rows.Close()
	var out []licentia.Invitation
	for rows.Next() {
		inv, err := scanInvitation(rows)
		if err != nil {
			return nil, fmt.Errorf("list invitations: %w", err)
		}
		out = append(out, *inv)
	}
	return out, rows.Err()
}

func (r reader) Invitation(ctx context.Context, orgID, id string) (*licentia.Invitation, error) {
	inv, err := scanInvitation(r.q.QueryRowContext(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE org_id = ? AND id = ?`,
		orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = invitationNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("read invitation: %w", err)
	}
	return inv, nil
}

func (r reader) InvitationByToken(ctx context.Context, hash []byte) (*licentia.Invitation, error) {
	inv, err := scanInvitation(r.q.QueryRowContext(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE token_hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.NotFound(licentia.CodeNotFound, "Invitation")
	}
	if err != nil {
		return nil, fmt.Errorf("read invitation by token: %w", err)
	}
	return inv, nil
}

func (r reader) CountInvitationsSince(ctx context.Context, orgID, email string, since time.Time) (all, toEmail int64, err error) {
	err = r.q.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE lower(email) = lower(?)) FROM invitations
		WHERE org_id = ? AND created_at >= ?`, email, orgID, store.Millis(since)).Scan(&all, &toEmail)
	if err != nil {
		return 0, 0, fmt.Errorf("count invitations: %w", err)
	}
	return all, toEmail, nil
}

func (t *tx) CreateInvitation(ctx context.Context, inv *licentia.Invitation) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO invitations (`+invitationColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		inv.ID, inv.OrgID, inv.Email, inv.Role, store.Millis(inv.ExpiresAt), store.Millis(inv.CreatedAt),
		store.MillisPtr(inv.AcceptedAt), store.MillisPtr(inv.RevokedAt), inv.TokenHash, inv.InvitedBy)
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The invitation id or token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create invitation: %w", err)
	}
	return nil
}

func (t *tx) RevokeInvitation(ctx context.Context, orgID, id string, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE invitations SET revoked_at = ?
		WHERE org_id = ? AND id = ? AND accepted_at IS NULL AND revoked_at IS NULL`, store.Millis(at), orgID, id)
	if err != nil {
		return false, fmt.Errorf("revoke invitation: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	if _, err := t.Invitation(ctx, orgID, id); err != nil {
		return false, fmt.Errorf("revoke invitation: %w", err)
	}
	return false, nil
}

// AcceptInvitation needs nothing more to be used once: transactions run
// one at a time on the writer, and the second finds accepted_at set.
func (t *tx) AcceptInvitation(ctx context.Context, id string, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE invitations SET accepted_at = ?
		WHERE id = ? AND accepted_at IS NULL AND revoked_at IS NULL`, store.Millis(at), id)
	if err != nil {
		return false, fmt.Errorf("accept invitation: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	var one int
	err = t.tx.QueryRowContext(ctx, `SELECT 1 FROM invitations WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		err = invitationNotFound()
	}
	if err != nil {
		return false, fmt.Errorf("accept invitation: %w", err)
	}
	return false, nil
}

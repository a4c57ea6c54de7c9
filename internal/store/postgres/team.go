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

// Addresses are compared as members_email compares them: lower() under
// COLLATE "C" folds ASCII letters only, as SQLite's lower() does, and the
// indexes on lower(email COLLATE "C") serve these queries.

const memberColumns = `id, org_id, email, role, created_at`

func memberNotFound() error { return store.NotFound(licentia.CodeMemberNotFound, "Member") }

func scanMember(row pgx.Row) (*licentia.Member, error) {
	var m licentia.Member
	err := row.Scan(&m.ID, &m.OrgID, &m.Email, &m.Role, &m.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, memberNotFound()
	}
	if err != nil {
		return nil, err
	}
	m.CreatedAt = m.CreatedAt.UTC()
	return &m, nil
}

func (r reader) Members(ctx context.Context, orgID string) ([]licentia.Member, error) {
	if !isID(orgID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+memberColumns+` FROM members WHERE org_id = $1 ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	out, err := collect(rows, scanMember)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	return out, nil
}

func (r reader) Member(ctx context.Context, orgID, id string) (*licentia.Member, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("read member: %w", memberNotFound())
	}
	m, err := scanMember(r.q.QueryRow(ctx, `SELECT `+memberColumns+` FROM members WHERE org_id = $1 AND id = $2`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read member: %w", err)
	}
	return m, nil
}

func (r reader) MemberByEmail(ctx context.Context, orgID, email string) (*licentia.Member, error) {
	if !isID(orgID) || !isText(email) {
		return nil, fmt.Errorf("read member by email: %w", memberNotFound())
	}
	m, err := scanMember(r.q.QueryRow(ctx, `SELECT `+memberColumns+` FROM members
		WHERE org_id = $1 AND lower(email COLLATE "C") = lower($2::text COLLATE "C")`, orgID, email))
	if err != nil {
		return nil, fmt.Errorf("read member by email: %w", err)
	}
	return m, nil
}

// Memberships orders names byte for byte, as SQLite does, whatever the
// database's collation.
func (r reader) Memberships(ctx context.Context, email string) ([]licentia.Membership, error) {
	if !isText(email) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT m.id, m.org_id, m.email, m.role, m.created_at, o.name, o.slug
		FROM members m JOIN organizations o ON o.id = m.org_id
		WHERE lower(m.email COLLATE "C") = lower($1::text COLLATE "C") ORDER BY o.name COLLATE "C", o.id`, email)
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	out, err := collect(rows, func(row pgx.Row) (*licentia.Membership, error) {
		var ms licentia.Membership
		if err := row.Scan(&ms.ID, &ms.OrgID, &ms.Email, &ms.Role, &ms.CreatedAt, &ms.OrgName, &ms.OrgSlug); err != nil {
			return nil, err
		}
		ms.CreatedAt = ms.CreatedAt.UTC()
		return &ms, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list memberships: %w", err)
	}
	return out, nil
}

func (t *tx) CreateMember(ctx context.Context, m *licentia.Member) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO members (`+memberColumns+`) VALUES ($1, $2, $3, $4, $5)`,
		m.ID, m.OrgID, m.Email, m.Role, ms(m.CreatedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "This address is already a member.")
	}
	if err != nil {
		return fmt.Errorf("create member: %w", err)
	}
	return nil
}

func (t *tx) SetMemberRole(ctx context.Context, orgID, id string, role licentia.Role) error {
	if !isID(orgID) || !isID(id) {
		return fmt.Errorf("set member role: %w", memberNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE members SET role = $1 WHERE org_id = $2 AND id = $3`, role, orgID, id)
	if err != nil {
		return fmt.Errorf("set member role: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("set member role: %w", memberNotFound())
	}
	return nil
}

// DeleteMember also deletes the member's login links: nothing references a
// member by foreign key, and a link must not outlive the member it signs in.
func (t *tx) DeleteMember(ctx context.Context, orgID, id string) error {
	if !isID(orgID) || !isID(id) {
		return fmt.Errorf("delete member: %w", memberNotFound())
	}
	tag, err := t.tx.Exec(ctx, `DELETE FROM members WHERE org_id = $1 AND id = $2`, orgID, id)
	if err != nil {
		return fmt.Errorf("delete member: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("delete member: %w", memberNotFound())
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM login_links WHERE org_id = $1 AND member_id = $2`, orgID, id); err != nil {
		return fmt.Errorf("delete member: %w", err)
	}
	return nil
}

const invitationColumns = `id, org_id, email, role, expires_at, created_at, accepted_at, revoked_at, token_hash, invited_by`

func invitationNotFound() error {
	return store.NotFound(licentia.CodeInvitationNotFound, "Invitation")
}

// scanInvitation leaves pgx.ErrNoRows as it is: a missing invitation answers
// invitation_not_found by id but not_found by token.
func scanInvitation(row pgx.Row) (*licentia.Invitation, error) {
	var inv licentia.Invitation
	if err := row.Scan(&inv.ID, &inv.OrgID, &inv.Email, &inv.Role, &inv.ExpiresAt, &inv.CreatedAt, &inv.AcceptedAt,
		&inv.RevokedAt, &inv.TokenHash, &inv.InvitedBy); err != nil {
		return nil, err
	}
	inv.ExpiresAt, inv.CreatedAt = inv.ExpiresAt.UTC(), inv.CreatedAt.UTC()
	inv.AcceptedAt, inv.RevokedAt = utcPtr(inv.AcceptedAt), utcPtr(inv.RevokedAt)
	return &inv, nil
}

func (r reader) PendingInvitations(ctx context.Context, orgID string, now time.Time) ([]licentia.Invitation, error) {
	if !isID(orgID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+invitationColumns+` FROM invitations
		WHERE org_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2
		ORDER BY created_at, id`, orgID, ms(now))
	if err != nil {
		return nil, fmt.Errorf("list invitations: %w", err)
	}
	out, err := collect(rows, scanInvitation)
	if err != nil {
		return nil, fmt.Errorf("list invitations: %w", err)
	}
	return out, nil
}

func (r reader) Invitation(ctx context.Context, orgID, id string) (*licentia.Invitation, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("read invitation: %w", invitationNotFound())
	}
	inv, err := scanInvitation(r.q.QueryRow(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE org_id = $1 AND id = $2`,
		orgID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		err = invitationNotFound()
	}
	if err != nil {
		return nil, fmt.Errorf("read invitation: %w", err)
	}
	return inv, nil
}

func (r reader) InvitationByToken(ctx context.Context, hash []byte) (*licentia.Invitation, error) {
	inv, err := scanInvitation(r.q.QueryRow(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE token_hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		err = store.NotFound(licentia.CodeNotFound, "Invitation")
	}
	if err != nil {
		return nil, fmt.Errorf("read invitation by token: %w", err)
	}
	return inv, nil
}

// CountInvitationsSince counts none to an address PostgreSQL cannot hold,
// as SQLite, holding none such, finds none.
func (r reader) CountInvitationsSince(ctx context.Context, orgID, email string, since time.Time) (all, toEmail int64, err error) {
	if !isID(orgID) {
		return 0, 0, nil
	}
	if !isText(email) {
		err = r.q.QueryRow(ctx, `SELECT count(*) FROM invitations WHERE org_id = $1 AND created_at >= $2`,
			orgID, ms(since)).Scan(&all)
	} else {
		err = r.q.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE lower(email COLLATE "C") = lower($3::text COLLATE "C"))
			FROM invitations WHERE org_id = $1 AND created_at >= $2`, orgID, ms(since), email).Scan(&all, &toEmail)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("count invitations: %w", err)
	}
	return all, toEmail, nil
}

func (t *tx) CreateInvitation(ctx context.Context, inv *licentia.Invitation) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO invitations (`+invitationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		inv.ID, inv.OrgID, inv.Email, inv.Role, ms(inv.ExpiresAt), ms(inv.CreatedAt),
		msPtr(inv.AcceptedAt), msPtr(inv.RevokedAt), inv.TokenHash, inv.InvitedBy)
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The invitation id or token is taken.")
	}
	if err != nil {
		return fmt.Errorf("create invitation: %w", err)
	}
	return nil
}

func (t *tx) RevokeInvitation(ctx context.Context, orgID, id string, at time.Time) (bool, error) {
	if !isID(orgID) || !isID(id) {
		return false, fmt.Errorf("revoke invitation: %w", invitationNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE invitations SET revoked_at = $1
		WHERE org_id = $2 AND id = $3 AND accepted_at IS NULL AND revoked_at IS NULL`, ms(at), orgID, id)
	if err != nil {
		return false, fmt.Errorf("revoke invitation: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	if _, err := t.Invitation(ctx, orgID, id); err != nil {
		return false, fmt.Errorf("revoke invitation: %w", err)
	}
	return false, nil
}

// AcceptInvitation is used once even across processes: of two racing
// updates, the second waits for the first's row lock and, at READ
// COMMITTED, then checks its WHERE again on the row the first committed.
func (t *tx) AcceptInvitation(ctx context.Context, id string, at time.Time) (bool, error) {
	if !isID(id) {
		return false, fmt.Errorf("accept invitation: %w", invitationNotFound())
	}
	tag, err := t.tx.Exec(ctx, `UPDATE invitations SET accepted_at = $1
		WHERE id = $2 AND accepted_at IS NULL AND revoked_at IS NULL`, ms(at), id)
	if err != nil {
		return false, fmt.Errorf("accept invitation: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	var one int
	err = t.tx.QueryRow(ctx, `SELECT 1 FROM invitations WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		err = invitationNotFound()
	}
	if err != nil {
		return false, fmt.Errorf("accept invitation: %w", err)
	}
	return false, nil
}

package admin

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/store"
)

// Team rules that are ours: an invitation's link lasts 7 days, and an
// organization sends at most 20 invitations, 3 to one address, in 24 hours.
const (
	InvitationLifetime    = 7 * 24 * time.Hour
	invitationWindow      = 24 * time.Hour
	invitationsPerOrg     = 20
	invitationsPerAddress = 3
)

// Acting is the member an operation runs as: one signed in to the console,
// or an AI assistant acting as one. Operations read the member again in
// their own transaction, so a demotion or a removal holds from the next
// request, on every process.
type Acting struct {
	OrgID    string
	MemberID string
	// Assistant is set when an AI assistant acts as the member.
	Assistant bool
}

// Actor is the audit actor of the acting member.
func (a Acting) Actor() licentia.Actor { return licentia.MemberActor(a.MemberID) }

// ActingMember reads the acting member as they are now; a member who was
// removed answers 401 unauthorized.
func (s *Service) ActingMember(ctx context.Context, by Acting) (*licentia.Member, error) {
	return actingMember(ctx, s.store, by)
}

func actingMember(ctx context.Context, r store.Reader, by Acting) (*licentia.Member, error) {
	m, err := r.Member(ctx, by.OrgID, by.MemberID)
	if licentia.ErrorCode(err) == licentia.CodeMemberNotFound {
		return nil, licentia.Errorf(licentia.CodeUnauthorized, "The member is no longer on the team.")
	}
	return m, err
}

// NewInvitation is the body of POST /v1/admin/invitations.
type NewInvitation struct {
	licentia.Decoded
	Email *string `json:"email" input:"required"`
	Role  *string `json:"role" input:"required"`
}

// Invitation is an invitation of email as role, for callers with nothing
// to decode.
func Invitation(email string, role licentia.Role) NewInvitation {
	r := string(role)
	return NewInvitation{Email: &email, Role: &r}
}

// Validate reports every problem of an invitation's body.
func (in *NewInvitation) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	// The invitee is mailed: the address must be one the mail library
	// takes, refused here rather than as a failed send (503).
	is.CheckString("/email", in.Email, licentia.CheckMailableEmail)
	is.CheckString("/role", in.Role, licentia.CheckGivenRole)
	return is
}

// Invite invites an address to the team and mails it a link. It replaces an
// invitation still pending for the address. Nothing is written unless the
// mail was handed over: the checks run once before sending, and again with
// the write, so a team that filled up meanwhile writes nothing.
func (s *Service) Invite(ctx context.Context, by Acting, in NewInvitation) (*licentia.Invitation, error) {
	if err := s.CanChangeTeam(ctx, by); err != nil {
		return nil, err
	}
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	if s.mail == nil {
		return nil, licentia.Errorf(licentia.CodeServiceUnavailable, "Mail is not configured; invitations cannot be sent.")
	}
	now := s.now()
	token, hash := auth.NewToken()
	inv := &licentia.Invitation{ID: licentia.NewID(), OrgID: by.OrgID, Email: *in.Email, Role: licentia.Role(*in.Role),
		ExpiresAt: now.Add(InvitationLifetime), CreatedAt: now, TokenHash: hash, InvitedBy: &by.MemberID}
	var org *licentia.Organization
	err := s.store.InTx(ctx, func(tx store.Tx) (err error) {
		org, _, err = s.checkInvite(ctx, tx, by, inv, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("invite: %w", err)
	}
	msg, err := invitationMail(org, inv, s.publicURL+LinkPath(LinkInvitation, token))
	if err != nil {
		return nil, fmt.Errorf("invite: %w", err)
	}
	if err := s.mail.Send(ctx, msg); err != nil {
		s.log.WarnContext(ctx, "invitation mail not handed over", "organization_id", by.OrgID, "error", err.Error())
		return nil, licentia.Errorf(licentia.CodeServiceUnavailable, "The invitation mail could not be sent; nothing was written. Try again later.")
	}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		_, replaced, err := s.checkInvite(ctx, tx, by, inv, now)
		if err != nil {
			return err
		}
		if replaced != nil {
			if _, err := tx.RevokeInvitation(ctx, by.OrgID, replaced.ID, now); err != nil {
				return err
			}
		}
		if err := tx.CreateInvitation(ctx, inv); err != nil {
			return err
		}
		data := map[string]any{"invitation_id": inv.ID, "role": inv.Role, "expires_at": licentia.FormatTime(inv.ExpiresAt)}
		if replaced != nil {
			data["replaced_invitation_id"] = replaced.ID
		}
		return s.teamAudit(ctx, tx, by, licentia.AuditInvitationCreated, now, data)
	})
	if err != nil {
		return nil, fmt.Errorf("invite: %w", err)
	}
	return inv, nil
}

// checkInvite runs the invitation's checks under the organization's lock,
// in the order of the contract: the caller's role, 409 for a member's
// address, 402 for a full team (the invitation it replaces frees its
// place), then 429 past the invitation limits. It returns the pending
// invitation to the same address, which the new one replaces.
func (s *Service) checkInvite(ctx context.Context, tx store.Tx, by Acting, inv *licentia.Invitation, now time.Time) (*licentia.Organization, *licentia.Invitation, error) {
	org, err := lockOrganization(ctx, tx, by.OrgID)
	if err != nil {
		return nil, nil, err
	}
	caller, err := actingMember(ctx, tx, by)
	if err != nil {
		return nil, nil, err
	}
	if err := licentia.CanInvite(caller.Role, inv.Role); err != nil {
		return nil, nil, err
	}
	if _, err := tx.MemberByEmail(ctx, by.OrgID, inv.Email); err == nil {
		return nil, nil, licentia.Errorf(licentia.CodeConflict, "This address is already a member of the team.")
	} else if licentia.ErrorCode(err) != licentia.CodeMemberNotFound {
		return nil, nil, err
	}
	pending, err := tx.PendingInvitations(ctx, by.OrgID, now)
	if err != nil {
		return nil, nil, err
	}
	var replaced *licentia.Invitation
	for i := range pending {
		if licentia.SameEmail(pending[i].Email, inv.Email) {
			replaced = &pending[i]
		}
	}
	if replaced == nil {
		if err := s.checkPlan(ctx, tx, org, resourceTeamPlaces, now); err != nil {
			return nil, nil, err
		}
	}
	all, toAddress, err := tx.CountInvitationsSince(ctx, by.OrgID, inv.Email, now.Add(-invitationWindow))
	if err != nil {
		return nil, nil, err
	}
	if all >= invitationsPerOrg || toAddress >= invitationsPerAddress {
		return nil, nil, licentia.Errorf(licentia.CodeRateLimited,
			"At most %d invitations per organization, and %d to one address, are sent in 24 hours.", invitationsPerOrg, invitationsPerAddress)
	}
	o, err := tx.Organization(ctx, by.OrgID)
	if err != nil {
		return nil, nil, err
	}
	return o, replaced, nil
}

func invitationMail(org *licentia.Organization, inv *licentia.Invitation, link string) (mail.Message, error) {
	return mail.InvitationMail{To: inv.Email, Brand: mail.Brand{Name: org.DisplayName()}, Role: string(inv.Role), Link: link,
		Expires: inv.ExpiresAt.UTC().Format("2 January 2006 at 15:04 UTC")}.Message()
}

// CanChangeTeam answers 403 insufficient_role, before the body is read,
// when the acting member's role cannot change the team at all.
func (s *Service) CanChangeTeam(ctx context.Context, by Acting) error {
	m, err := s.ActingMember(ctx, by)
	if err != nil {
		return err
	}
	if !m.Role.HasScope(licentia.ScopeMembersWrite) {
		return licentia.CanChangeMember(m.Role, "", nil, false)
	}
	return nil
}

// RevokeInvitation revokes a pending invitation; its link stops working.
func (s *Service) RevokeInvitation(ctx context.Context, by Acting, id string) (*licentia.Invitation, error) {
	if err := s.CanChangeTeam(ctx, by); err != nil {
		return nil, err
	}
	now := s.now()
	var inv *licentia.Invitation
	err := s.store.InTx(ctx, func(tx store.Tx) (err error) {
		if _, err := lockOrganization(ctx, tx, by.OrgID); err != nil {
			return err
		}
		caller, err := actingMember(ctx, tx, by)
		if err != nil {
			return err
		}
		if inv, err = tx.Invitation(ctx, by.OrgID, id); err != nil {
			return err
		}
		if inv.AcceptedAt != nil || inv.RevokedAt != nil {
			return licentia.Errorf(licentia.CodeInvitationNotPending, "The invitation was already accepted or revoked.")
		}
		if err := licentia.CanChangeMember(caller.Role, inv.Role, nil, false); err != nil {
			return err
		}
		if _, err := tx.RevokeInvitation(ctx, by.OrgID, id, now); err != nil {
			return err
		}
		inv.RevokedAt = &now
		return s.teamAudit(ctx, tx, by, licentia.AuditInvitationRevoked, now, map[string]any{"invitation_id": inv.ID, "role": inv.Role})
	})
	if err != nil {
		return nil, fmt.Errorf("revoke invitation: %w", err)
	}
	return inv, nil
}

// ChangeRole is the body of PUT /v1/admin/members/{id}/role.
type ChangeRole struct {
	licentia.Decoded
	Role *string `json:"role" input:"required"`
}

// Role is a role change to role, for callers with nothing to decode.
func Role(role licentia.Role) ChangeRole {
	r := string(role)
	return ChangeRole{Role: &r}
}

// Validate reports every problem of a role change's body.
func (in *ChangeRole) Validate() licentia.Issues {
	is := append(slices.Clone(in.Before), licentia.CheckFields(in)...)
	is.CheckString("/role", in.Role, licentia.CheckGivenRole)
	return is
}

// ChangeMemberRole gives a member another role and ends their console
// sessions.
func (s *Service) ChangeMemberRole(ctx context.Context, by Acting, id string, in ChangeRole) (*licentia.Member, error) {
	if err := s.CanChangeTeam(ctx, by); err != nil {
		return nil, err
	}
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	role := licentia.Role(*in.Role)
	now := s.now()
	var target *licentia.Member
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		caller, t, err := s.lockTeamChange(ctx, tx, by, id)
		if err != nil {
			return err
		}
		if err := licentia.CanChangeMember(caller.Role, t.Role, &role, t.ID == caller.ID); err != nil {
			return err
		}
		target = t
		if t.Role == role {
			return nil
		}
		if err := tx.SetMemberRole(ctx, by.OrgID, id, role); err != nil {
			return err
		}
		from := t.Role
		target.Role = role
		if err := s.endSessions(ctx, tx, t.Email); err != nil {
			return err
		}
		return s.teamAudit(ctx, tx, by, licentia.AuditMemberRoleChanged, now, map[string]any{"member_id": id, "from": from, "to": role})
	})
	if err != nil {
		return nil, fmt.Errorf("change member role: %w", err)
	}
	return target, nil
}

// RemoveMember takes a member off the team and ends their console sessions.
func (s *Service) RemoveMember(ctx context.Context, by Acting, id string) error {
	if err := s.CanChangeTeam(ctx, by); err != nil {
		return err
	}
	now := s.now()
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		caller, t, err := s.lockTeamChange(ctx, tx, by, id)
		if err != nil {
			return err
		}
		if err := licentia.CanChangeMember(caller.Role, t.Role, nil, t.ID == caller.ID); err != nil {
			return err
		}
		if err := tx.DeleteMember(ctx, by.OrgID, id); err != nil {
			return err
		}
		if _, err := tx.RevokeMemberGrants(ctx, by.OrgID, id, now); err != nil {
			return err
		}
		if err := s.endSessions(ctx, tx, t.Email); err != nil {
			return err
		}
		return s.teamAudit(ctx, tx, by, licentia.AuditMemberRemoved, now, map[string]any{"member_id": id, "role": t.Role})
	})
	if err != nil {
		return fmt.Errorf("remove member: %w", err)
	}
	return nil
}

// lockTeamChange takes the organization's lock, so two changes of one team
// run one after the other, and reads the acting member and the target.
func (s *Service) lockTeamChange(ctx context.Context, tx store.Tx, by Acting, id string) (caller, target *licentia.Member, err error) {
	if _, err := lockOrganization(ctx, tx, by.OrgID); err != nil {
		return nil, nil, err
	}
	if caller, err = actingMember(ctx, tx, by); err != nil {
		return nil, nil, err
	}
	if target, err = tx.Member(ctx, by.OrgID, id); err != nil {
		return nil, nil, err
	}
	return caller, target, nil
}

// endSessions signs a person out of the console everywhere, after a change
// of their role or place on a team.
func (s *Service) endSessions(ctx context.Context, tx store.Tx, email string) error {
	a, err := tx.AccountByEmail(ctx, email)
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = tx.DeleteAccountSessions(ctx, a.ID)
	return err
}

// teamAudit writes a team change to the organization's audit log. No
// address goes in: the log names members by id.
func (s *Service) teamAudit(ctx context.Context, tx store.Tx, by Acting, action string, now time.Time, data map[string]any) error {
	return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: by.OrgID, Action: action, Actor: by.Actor(), At: now}, data)
}

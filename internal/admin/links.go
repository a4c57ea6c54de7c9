package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// LoginLinkLifetime is how long a setup link works.
const LoginLinkLifetime = 24 * time.Hour

// Link kinds: a setup link sets a member's password; an invitation link
// makes the invitee a member.
const (
	LinkSetup      = "setup"
	LinkInvitation = "invitation"
)

// LinkPath is the console path of a link of kind with token.
func LinkPath(kind, token string) string {
	if kind == LinkInvitation {
		return "/console/join/" + token
	}
	return courier.SetupPath(token)
}

// LoginLink is a new setup link, shown once.
type LoginLink struct {
	URL       string
	ExpiresAt time.Time
}

// NewLoginLink makes a one-time link that sets the password of the member
// of orgID with email, valid 24 hours: org create's setup_url and member
// login-link. Links made before stay valid until used or expired.
func (s *Service) NewLoginLink(ctx context.Context, actor licentia.Actor, orgID, email string) (*LoginLink, error) {
	// Setup links are for members, whom the service mails: an address
	// mail cannot be sent to is refused as such before it is looked up.
	var is licentia.Issues
	is.CheckString("email", &email, licentia.CheckMailableEmail)
	if err := is.Err(); err != nil {
		return nil, fmt.Errorf("login link: %w", err)
	}
	now := s.now()
	token, hash := auth.NewToken()
	l := &licentia.LoginLink{ID: licentia.NewID(), OrgID: orgID, TokenHash: hash, ExpiresAt: now.Add(LoginLinkLifetime), CreatedAt: now}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		m, err := tx.MemberByEmail(ctx, orgID, email)
		if err != nil {
			return err
		}
		l.MemberID = m.ID
		if err := tx.CreateLoginLink(ctx, l); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditMemberLoginLinkCreated, Actor: actor, At: now},
			map[string]any{"member_id": m.ID, "expires_at": licentia.FormatTime(l.ExpiresAt)})
	})
	if err != nil {
		return nil, fmt.Errorf("login link: %w", err)
	}
	return &LoginLink{URL: s.publicURL + LinkPath(LinkSetup, token), ExpiresAt: l.ExpiresAt}, nil
}

// LinkView is what a link's page shows before its form is sent.
type LinkView struct {
	Kind    string
	OrgID   string
	OrgName string
	Email   string
	Role    licentia.Role
	// HasPassword is set when the address already has a console password,
	// which an invitation link asks for instead of a new one.
	HasPassword bool
}

var errLinkGone = licentia.Errorf(licentia.CodeNotFound, "This link is not valid: it was used, replaced, revoked or has expired.")

// OpenLink reads a link for its page. A link that cannot be used (unknown,
// used, replaced, revoked, expired, or its member removed) answers
// not_found, all alike.
func (s *Service) OpenLink(ctx context.Context, kind, token string) (*LinkView, error) {
	v, err := s.openLink(ctx, s.store, kind, token, s.now())
	if err != nil {
		return nil, err
	}
	return &v.LinkView, nil
}

// openedLink is a usable link with the records it concerns.
type openedLink struct {
	LinkView
	loginLink  *licentia.LoginLink
	invitation *licentia.Invitation
	member     *licentia.Member // setup links only
	account    *licentia.Account
}

func (s *Service) openLink(ctx context.Context, r store.Reader, kind, token string, now time.Time) (*openedLink, error) {
	hash := auth.TokenHash(token)
	v := &openedLink{LinkView: LinkView{Kind: kind}}
	switch kind {
	case LinkSetup:
		l, err := r.LoginLinkByToken(ctx, hash)
		if err != nil {
			return nil, gone(err)
		}
		if l.UsedAt != nil || !now.Before(l.ExpiresAt) {
			return nil, errLinkGone
		}
		m, err := r.Member(ctx, l.OrgID, l.MemberID)
		if err != nil {
			return nil, gone(err)
		}
		v.loginLink, v.member = l, m
		v.OrgID, v.Email, v.Role = m.OrgID, m.Email, m.Role
	case LinkInvitation:
		inv, err := r.InvitationByToken(ctx, hash)
		if err != nil {
			return nil, gone(err)
		}
		if !inv.Pending(now) {
			return nil, errLinkGone
		}
		v.invitation = inv
		v.OrgID, v.Email, v.Role = inv.OrgID, inv.Email, inv.Role
	default:
		return nil, errLinkGone
	}
	o, err := r.Organization(ctx, v.OrgID)
	if err != nil {
		return nil, err
	}
	v.OrgName = o.Name
	a, err := r.AccountByEmail(ctx, v.Email)
	switch {
	case err == nil:
		v.account, v.HasPassword = a, a.PasswordHash != ""
	case licentia.ErrorCode(err) != licentia.CodeNotFound:
		return nil, err
	}
	return v, nil
}

// gone turns a not-found of any kind into the one answer of an unusable
// link, and lets other errors through.
func gone(err error) error {
	switch licentia.ErrorCode(err) {
	case licentia.CodeNotFound, licentia.CodeMemberNotFound, licentia.CodeInvitationNotFound:
		return errLinkGone
	}
	return err
}

// UseLink uses a link once. A setup link sets the member's password. An
// invitation link makes the invitee a member with the invitation's role:
// an address new to the console sets its password with it, and one that
// has a password gives it. It returns the account to sign in and the
// member it signs in as.
func (s *Service) UseLink(ctx context.Context, kind, token, password string) (*licentia.Account, *licentia.Member, error) {
	v, err := s.openLink(ctx, s.store, kind, token, s.now())
	if err != nil {
		return nil, nil, err
	}
	// Hashing and checking are slow, so they run before the transaction.
	var newHash string
	if kind == LinkInvitation && v.HasPassword {
		ok, err := auth.CheckPassword(ctx, v.account.PasswordHash, password)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, licentia.Errorf(licentia.CodeUnauthorized, "The password is not this address's console password.")
		}
	} else {
		if msg := auth.CheckNewPassword(password); msg != "" {
			var is licentia.Issues
			is.Add("/password", "%s", msg)
			return nil, nil, is.Err()
		}
		if newHash, err = auth.HashPassword(ctx, password); err != nil {
			return nil, nil, err
		}
	}
	now := s.now()
	var account *licentia.Account
	var member *licentia.Member
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		v, err := s.openLink(ctx, tx, kind, token, now)
		if err != nil {
			return err
		}
		// The link is marked used first, so of two requests racing with
		// one link, the second stops here.
		if kind == LinkSetup {
			if ok, err := tx.UseLoginLink(ctx, v.loginLink.ID, now); err != nil || !ok {
				return cmpErr(err, errLinkGone)
			}
		} else {
			if _, err := lockOrganization(ctx, tx, v.OrgID); err != nil {
				return err
			}
			if ok, err := tx.AcceptInvitation(ctx, v.invitation.ID, now); err != nil || !ok {
				return cmpErr(err, errLinkGone)
			}
		}
		if account, err = s.accountFor(ctx, tx, v, newHash, now); err != nil {
			return err
		}
		if kind == LinkSetup {
			member = v.member
			return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: v.OrgID, Action: licentia.AuditMemberPasswordSet,
				Actor: licentia.MemberActor(member.ID), At: now}, map[string]any{"member_id": member.ID})
		}
		member, err = s.join(ctx, tx, v.invitation, now)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("use %s link: %w", kind, err)
	}
	return account, member, nil
}

// accountFor returns the link's account, made or given its new password
// when newHash is set.
func (s *Service) accountFor(ctx context.Context, tx store.Tx, v *openedLink, newHash string, now time.Time) (*licentia.Account, error) {
	if v.account == nil {
		a := &licentia.Account{ID: licentia.NewID(), Email: v.Email, PasswordHash: newHash, CreatedAt: now, UpdatedAt: now}
		return a, tx.CreateAccount(ctx, a)
	}
	a := *v.account
	if newHash != "" {
		a.PasswordHash, a.UpdatedAt = newHash, now
		if err := tx.SetAccountPassword(ctx, a.ID, newHash, now); err != nil {
			return nil, err
		}
	}
	return &a, nil
}

// join makes the invitee of an accepted invitation a member with its role.
// The invitation held a team place while pending, so the plan is not
// checked again.
func (s *Service) join(ctx context.Context, tx store.Tx, inv *licentia.Invitation, now time.Time) (*licentia.Member, error) {
	m := &licentia.Member{ID: licentia.NewID(), OrgID: inv.OrgID, Email: inv.Email, Role: inv.Role, CreatedAt: now}
	if err := tx.CreateMember(ctx, m); err != nil {
		if licentia.ErrorCode(err) == licentia.CodeConflict {
			return nil, licentia.Errorf(licentia.CodeConflict, "This address is already a member of the team.")
		}
		return nil, err
	}
	return m, events.Audit(ctx, tx, licentia.AuditEntry{OrgID: inv.OrgID, Action: licentia.AuditMemberAdded, Actor: licentia.MemberActor(m.ID), At: now},
		map[string]any{"member_id": m.ID, "role": m.Role, "invitation_id": inv.ID})
}

// cmpErr returns err, or fallback when err is nil.
func cmpErr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}

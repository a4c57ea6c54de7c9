package admin

import (
	"context"
	"fmt"
	"strings"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// ForgotPassword queues a mail carrying a one-time link that sets the
// console password of the address email, when it belongs to a member of
// some organization; for any other address it does nothing, and the
// caller answers alike. The link is a setup link, as member login-link
// makes, of the member's first organization, valid LoginLinkLifetime:
// its row and its mail are written in one transaction, the mail keyed by
// the link's id, and the token exists only in the mail the courier
// renders. The caller limits how often it is asked.
func (s *Service) ForgotPassword(ctx context.Context, email string) error {
	email = strings.TrimSpace(email)
	if licentia.CheckMailableEmail(email) != "" {
		return nil
	}
	ms, err := s.store.Memberships(ctx, email)
	if err != nil || len(ms) == 0 {
		return err
	}
	m := ms[0].Member
	id := licentia.NewID()
	token, err := s.keys.LinkToken(courier.PasswordPurpose, id)
	if err != nil {
		return fmt.Errorf("forgot password: %w", err)
	}
	now := s.now()
	l := &licentia.LoginLink{ID: id, OrgID: m.OrgID, MemberID: m.ID, TokenHash: auth.TokenHash(token),
		ExpiresAt: now.Add(LoginLinkLifetime), CreatedAt: now}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.CreateLoginLink(ctx, l); err != nil {
			return err
		}
		if err := tx.CreateMail(ctx, &licentia.Mail{ID: id, OrgID: m.OrgID, Kind: licentia.MailPassword,
			Status: licentia.MailQueued, NextAttemptAt: &now, CreatedAt: now}); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: m.OrgID, Action: licentia.AuditMemberLoginLinkCreated,
			Actor: licentia.MemberActor(m.ID), At: now},
			map[string]any{"member_id": m.ID, "expires_at": licentia.FormatTime(l.ExpiresAt), "mailed": true})
	})
	if err != nil {
		return fmt.Errorf("forgot password: %w", err)
	}
	return nil
}

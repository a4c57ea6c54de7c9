package admin

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// OperatorClientName names the grants `licentia assistant token` makes.
const OperatorClientName = "licentia assistant token"

// AccessToken is a new assistant access token, shown once.
type AccessToken struct {
	Token     string
	ExpiresAt time.Time
}

// NewAssistantToken makes a grant for an AI assistant to act as the member
// of orgID with email, as one made on the consent page would, and returns
// its access token: for scripts and tests.
func (s *Service) NewAssistantToken(ctx context.Context, actor licentia.Actor, orgID, email string) (*AccessToken, error) {
	now := s.now()
	token, hash := auth.NewAssistantToken(licentia.TokenAccess)
	g := &licentia.Grant{ID: licentia.NewID(), OrgID: orgID, ClientName: OperatorClientName, CreatedAt: now}
	t := &licentia.AssistantToken{TokenHash: hash, GrantID: g.ID, Kind: licentia.TokenAccess,
		ExpiresAt: now.Add(auth.AccessTokenLifetime), CreatedAt: now}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		m, err := tx.MemberByEmail(ctx, orgID, email)
		if err != nil {
			return err
		}
		g.MemberID = m.ID
		if err := tx.CreateGrant(ctx, g); err != nil {
			return err
		}
		if err := tx.CreateAssistantToken(ctx, t); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditGrantCreated, Actor: actor, At: now},
			map[string]any{"grant_id": g.ID, "member_id": m.ID, "client_name": g.ClientName})
	})
	if err != nil {
		return nil, fmt.Errorf("assistant token: %w", err)
	}
	return &AccessToken{Token: token, ExpiresAt: t.ExpiresAt}, nil
}

// Grants lists the acting member's live grants to AI assistants, oldest
// first: a member sees their own grants and no one else's.
func (s *Service) Grants(ctx context.Context, by Acting) ([]licentia.Grant, error) {
	gs, err := s.store.Grants(ctx, by.OrgID, by.MemberID)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	return gs, nil
}

// RevokeGrant ends one of the acting member's grants, and so every token
// it gave, at once, and reports whether it changed: an ended grant is left
// as it is. Another member's grant answers not_found like a missing one.
func (s *Service) RevokeGrant(ctx context.Context, by Acting, id string) (bool, error) {
	now := s.now()
	var changed bool
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		live, err := tx.Grants(ctx, by.OrgID, by.MemberID)
		if err != nil {
			return err
		}
		if changed, err = tx.RevokeGrant(ctx, by.OrgID, by.MemberID, id, now); err != nil || !changed {
			return err
		}
		data := map[string]any{"grant_id": id, "member_id": by.MemberID}
		if i := slices.IndexFunc(live, func(g licentia.Grant) bool { return g.ID == id }); i >= 0 {
			data["client_name"] = live[i].ClientName
			if live[i].ClientID != "" {
				data["client_id"] = live[i].ClientID
			}
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: by.OrgID, Action: licentia.AuditGrantRevoked, Actor: by.Actor(), At: now}, data)
	})
	if err != nil {
		return false, fmt.Errorf("revoke grant %s: %w", id, err)
	}
	return changed, nil
}

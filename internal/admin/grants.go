package admin

import (
	"context"
	"fmt"
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

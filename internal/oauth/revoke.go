package oauth

import (
	"context"
	"fmt"
	"net/url"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// Revoke revokes a token (RFC 7009): an access or a refresh token ends its
// whole grant, so the client's other tokens stop working too, audited with
// the grant's member as actor, since the client acts as them. A token the
// server does not know, or one given to another client than clientID (when
// given), changes nothing and is no error: the answer never tells whether
// a token exists. token_type_hint is ignored; the token says its kind.
func (s *Service) Revoke(ctx context.Context, clientID string, form url.Values) error {
	if err := once(form); err != nil {
		return err
	}
	token := form.Get("token")
	if token == "" {
		return refuse(ErrInvalidRequest, "token is required.")
	}
	now := s.now()
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		t, err := tx.AssistantToken(ctx, auth.TokenHash(token))
		if licentia.ErrorCode(err) == licentia.CodeNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		if clientID != "" && t.Grant.ClientID != clientID {
			return nil
		}
		return endGrant(ctx, tx, &t.Grant, licentia.MemberActor(t.Grant.MemberID), reasonClientRevoked, now)
	})
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// NewAPIKey is what creates an API key.
type NewAPIKey struct {
	Name      string
	Scopes    []licentia.Scope
	ExpiresAt *time.Time
}

// ParseScopes reads a comma-separated list of scopes.
func ParseScopes(csv string) ([]licentia.Scope, error) {
	var is licentia.Issues
	var out []licentia.Scope
	for _, f := range strings.Split(csv, ",") {
		sc := licentia.Scope(strings.TrimSpace(f))
		switch {
		case sc == "":
			continue
		case sc == licentia.ScopeMembersWrite:
			is.Add("scopes", "members:write is never held by a key")
		case !licentia.IsKeyScope(sc):
			is.Add("scopes", "unknown scope %q", sc)
		case !slices.Contains(out, sc):
			out = append(out, sc)
		}
	}
	if len(out) == 0 && len(is) == 0 {
		is.Add("scopes", "at least one scope is required")
	}
	if err := is.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// CreateAPIKey creates a key in orgID. The key is returned once and only its
// prefix and hash are stored. Live keys count against the plan.
func (s *Service) CreateAPIKey(ctx context.Context, actor licentia.Actor, orgID string, in NewAPIKey) (auth.Key, *licentia.APIKey, error) {
	now := s.now()
	var is licentia.Issues
	if len([]rune(in.Name)) > 200 {
		is.Add("name", "must be at most 200 characters")
	}
	if in.ExpiresAt != nil {
		if msg := licentia.CheckTime(*in.ExpiresAt); msg != "" {
			is.Add("expires_at", "%s", msg)
		} else if !in.ExpiresAt.After(now) {
			is.Add("expires_at", "must be in the future")
		}
	}
	for _, sc := range in.Scopes {
		if !licentia.IsKeyScope(sc) {
			is.Add("scopes", "scope %q cannot be held by a key", sc)
		}
	}
	if len(in.Scopes) == 0 {
		is.Add("scopes", "at least one scope is required")
	}
	if err := is.Err(); err != nil {
		return auth.Key{}, nil, err
	}
	key, prefix := auth.NewKey()
	k := &licentia.APIKey{
		ID: licentia.NewID(), OrgID: orgID, Name: in.Name, Prefix: prefix,
		Hash: auth.Hash(key.Reveal()), Scopes: in.Scopes, ExpiresAt: in.ExpiresAt, CreatedAt: now,
	}
	if k.ExpiresAt != nil {
		t := licentia.TruncateMillis(*k.ExpiresAt)
		k.ExpiresAt = &t
	}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		org, err := lockOrganization(ctx, tx, orgID)
		if err != nil {
			return err
		}
		if err := s.checkPlan(ctx, tx, org, resourceAPIKeys, now); err != nil {
			return err
		}
		if err := tx.CreateAPIKey(ctx, k); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditAPIKeyCreated, Actor: actor, At: now},
			map[string]any{"api_key_id": k.ID, "prefix": k.Prefix, "scopes": k.Scopes})
	})
	if err != nil {
		return auth.Key{}, nil, fmt.Errorf("create api key: %w", err)
	}
	return key, k, nil
}

// APIKeys lists an organization's keys (never the keys themselves).
func (s *Service) APIKeys(ctx context.Context, orgID string) ([]licentia.APIKey, error) {
	return s.store.APIKeys(ctx, orgID)
}

// RevokeAPIKey revokes a key at once and reports whether it changed.
func (s *Service) RevokeAPIKey(ctx context.Context, actor licentia.Actor, orgID, id string) (bool, error) {
	id, ok := licentia.ParseUUID(id)
	if !ok {
		var is licentia.Issues
		is.Add("id", "must be a UUID")
		return false, is.Err()
	}
	now := s.now()
	var changed bool
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if changed, err = tx.RevokeAPIKey(ctx, orgID, id, now); err != nil || !changed {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditAPIKeyRevoked, Actor: actor, At: now},
			map[string]any{"api_key_id": id})
	})
	if err != nil {
		return false, fmt.Errorf("revoke api key: %w", err)
	}
	return changed, nil
}

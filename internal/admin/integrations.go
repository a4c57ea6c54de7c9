package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/store"
)

// IntegrationView is an integration with the address its provider sends
// webhooks to: <LICENTIA_BASE_URL>/v1/providers/<id>/webhooks, or nil while
// the service has no base URL.
type IntegrationView struct {
	Integration *licentia.Integration
	WebhookURL  *string
}

func (s *Service) integrationView(i *licentia.Integration) IntegrationView {
	v := IntegrationView{Integration: i}
	if s.baseURL != "" {
		u := strings.TrimRight(s.baseURL, "/") + "/v1/providers/" + i.ID + "/webhooks"
		v.WebhookURL = &u
	}
	return v
}

// ConnectIntegration is what connects a provider account. It is not read
// from the administration routes: no scope connects an integration.
type ConnectIntegration struct {
	Provider      string
	Name          string
	APIKey        providers.Secret
	WebhookSecret providers.Secret
}

// Validate reports every problem of a connection. The webhook secret may
// be empty: the provider gives it only once its endpoint is created with
// the integration's webhook_url, and SetWebhookSecret sets it then.
func (in *ConnectIntegration) Validate() licentia.Issues {
	var is licentia.Issues
	if !slices.Contains(providers.Names, providers.Name(in.Provider)) {
		is.Add("/provider", "must be one of stripe, paddle, lemonsqueezy")
	}
	is.CheckString("/name", &in.Name, licentia.CheckName)
	checkCredential(&is, "/api_key", in.APIKey)
	if in.WebhookSecret != "" {
		checkCredential(&is, "/webhook_secret", in.WebhookSecret)
	}
	return is
}

func checkCredential(is *licentia.Issues, path string, value providers.Secret) {
	if v := value.Reveal(); v == "" || len(v) > 1024 || strings.ContainsFunc(v, isSpaceOrControl) {
		is.Add(path, "must be 1 to 1024 characters without spaces or control characters")
	}
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

// integrationsReady answers 503 integrations_not_configured while the
// master key, which seals every credential, is unavailable.
func (s *Service) integrationsReady() error {
	if _, err := s.keys.Master(); err != nil {
		return licentia.Errorf(licentia.CodeIntegrationsNotConfigured, "Payment integrations are not configured on this service: its master key (LICENTIA_MASTER_KEY_FILE) is unavailable.")
	}
	return nil
}

// client returns the API client of a provider.
func (s *Service) client(name string) (providers.Client, error) {
	c, ok := s.providers[providers.Name(name)]
	if !ok {
		return nil, licentia.Errorf(licentia.CodeIntegrationsNotConfigured, "The payment provider %s is not available on this service.", name)
	}
	return c, nil
}

// providerError maps what a provider's client reports to the contract's
// codes. The cause is kept for the log; it never holds a credential.
func providerError(ctx context.Context, err error) error {
	reason := ""
	switch {
	case errors.Is(err, providers.ErrTokenRefused):
		reason = "token_refused"
	case errors.Is(err, providers.ErrPermissionDenied):
		reason = "permission_denied"
	case errors.Is(err, providers.ErrUnavailable),
		errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return &licentia.Error{Code: licentia.CodeProviderUnavailable, Message: "The payment provider did not answer or failed.", Err: err}
	default:
		return err
	}
	return &licentia.Error{Code: licentia.CodeProviderTokenInvalid, Message: "The payment provider refused the integration's key.",
		Details: map[string]any{"reason": reason}, Err: err}
}

// ConnectIntegration checks the credentials with the provider (Stripe: GET
// /v1/account), then seals them under the master key and stores the
// integration, which takes a place in the plan (402, nothing written).
func (s *Service) ConnectIntegration(ctx context.Context, actor licentia.Actor, orgID string, in ConnectIntegration) (*IntegrationView, error) {
	if err := in.Validate().Err(); err != nil {
		return nil, err
	}
	if _, err := s.store.Organization(ctx, orgID); err != nil {
		return nil, err
	}
	if err := s.integrationsReady(); err != nil {
		return nil, err
	}
	c, err := s.client(in.Provider)
	if err != nil {
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, providers.Timeout)
	acct, err := c.Account(callCtx, in.APIKey.Reveal())
	cancel()
	if err != nil {
		return nil, fmt.Errorf("connect integration: %w", providerError(ctx, err))
	}
	now := s.now()
	i := &licentia.Integration{ID: licentia.NewID(), OrgID: orgID, Provider: in.Provider, Name: in.Name,
		AccountID: acct.ID, Livemode: acct.Livemode, CreatedAt: now}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		org, err := lockOrganization(ctx, tx, orgID)
		if err != nil {
			return err
		}
		if err := s.checkPlan(ctx, tx, org, resourceIntegrations, now); err != nil {
			return err
		}
		master, err := s.sealingKey(ctx, tx)
		if err != nil {
			return err
		}
		providers.Seal(master, i, in.APIKey, in.WebhookSecret)
		if err := tx.CreateIntegration(ctx, i); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditIntegrationConnected, Actor: actor, At: now},
			map[string]any{"integration_id": i.ID, "provider": i.Provider, "name": i.Name, "account_id": i.AccountID, "livemode": i.Livemode})
	})
	if err != nil {
		return nil, fmt.Errorf("connect integration: %w", err)
	}
	v := s.integrationView(i)
	return &v, nil
}

// Integrations lists the organization's connected integrations, oldest
// first.
func (s *Service) Integrations(ctx context.Context, orgID string) ([]IntegrationView, error) {
	if err := s.integrationsReady(); err != nil {
		return nil, err
	}
	is, err := s.store.Integrations(ctx, orgID)
	if err != nil {
		return nil, fmt.Errorf("list integrations: %w", err)
	}
	out := make([]IntegrationView, len(is))
	for n := range is {
		out[n] = s.integrationView(&is[n])
	}
	return out, nil
}

// connected reads a connected integration of the organization; a
// disconnected one answers integration_not_found like a missing one.
func connected(ctx context.Context, r store.Reader, orgID, id string) (*licentia.Integration, error) {
	i, err := r.Integration(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if !i.IsConnected() {
		return nil, store.NotFound(licentia.CodeIntegrationNotFound, "Integration")
	}
	return i, nil
}

// DisconnectIntegration disconnects an integration: it is no longer listed
// and receives nothing, keeps its licences, and frees its place in the
// plan. Its mappings stay, unused.
func (s *Service) DisconnectIntegration(ctx context.Context, actor licentia.Actor, orgID, id string) error {
	now := s.now()
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		i, err := connected(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if err := tx.DisconnectIntegration(ctx, orgID, id, now); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditIntegrationDisconnected, Actor: actor, At: now},
			map[string]any{"integration_id": id, "provider": i.Provider, "account_id": i.AccountID})
	})
	if err != nil {
		return fmt.Errorf("disconnect integration: %w", err)
	}
	return nil
}

// SetWebhookSecret sets or replaces the webhook secret of a connected
// integration of the organization, sealed under the master key as
// connecting seals it: from then on, its provider's webhooks are verified
// with it alone.
func (s *Service) SetWebhookSecret(ctx context.Context, actor licentia.Actor, orgID, id string, secret providers.Secret) (*IntegrationView, error) {
	var is licentia.Issues
	checkCredential(&is, "/webhook_secret", secret)
	if err := is.Err(); err != nil {
		return nil, err
	}
	if _, err := connected(ctx, s.store, orgID, id); err != nil {
		return nil, fmt.Errorf("set webhook secret: %w", err)
	}
	if err := s.integrationsReady(); err != nil {
		return nil, err
	}
	now := s.now()
	var i *licentia.Integration
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		// The master key first: a rotation meanwhile has either resealed
		// the integration, read below, or waits.
		master, err := s.sealingKey(ctx, tx)
		if err != nil {
			return err
		}
		if i, err = connected(ctx, tx, orgID, id); err != nil {
			return err
		}
		if i.MasterFingerprint != master.Fingerprint() {
			return fmt.Errorf("integration %s is sealed under %s, not the master key %s", i.ID, i.MasterFingerprint, master.Fingerprint())
		}
		i.SealedWebhookSecret = providers.SealWebhookSecret(master, i.ID, secret)
		if err := tx.SetIntegrationWebhookSecret(ctx, orgID, id, i.SealedWebhookSecret); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditIntegrationWebhookSecretSet, Actor: actor, At: now},
			map[string]any{"integration_id": id, "provider": i.Provider, "account_id": i.AccountID})
	})
	if err != nil {
		return nil, fmt.Errorf("set webhook secret: %w", err)
	}
	v := s.integrationView(i)
	return &v, nil
}

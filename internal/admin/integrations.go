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
		return licentia.Errorf(licentia.CodeIntegrationsNotConfigured, "Payment integrations are not configured on this service.")
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

// Mappings lists a connected integration's mappings, ordered by
// provider_product_id.
func (s *Service) Mappings(ctx context.Context, orgID, integrationID string) ([]licentia.Mapping, error) {
	if _, err := connected(ctx, s.store, orgID, integrationID); err != nil {
		return nil, fmt.Errorf("list mappings: %w", err)
	}
	if err := s.integrationsReady(); err != nil {
		return nil, err
	}
	ms, err := s.store.Mappings(ctx, orgID, integrationID)
	if err != nil {
		return nil, fmt.Errorf("list mappings: %w", err)
	}
	return ms, nil
}

// PutMapping is the body of a mapping; nil fields take their defaults.
type PutMapping struct {
	licentia.Decoded
	ProductID         *string                     `json:"product_id" input:"required"`
	LimitKind         *licentia.LimitKind         `json:"limit_kind"`
	LimitCount        *int64                      `json:"limit_count" input:"min=1,max=4294967295"`
	KeyValidDays      *int64                      `json:"key_valid_days" input:"nullable,min=1,max=36500"`
	OnRefund          *licentia.OnRefund          `json:"on_refund"`
	OnSubscriptionEnd *licentia.OnSubscriptionEnd `json:"on_subscription_end"`
	RenewalURL        *string                     `json:"renewal_url" input:"nullable"`
}

// Validate reports every problem of a mapping of providerProductID: the
// path first, then each field's own, then the rules.
func (in *PutMapping) Validate(providerProductID string) licentia.Issues {
	is := append(pathIssues(in.Before, providerProductID), licentia.CheckFields(in)...)
	var rules licentia.Issues
	rules.CheckString("/product_id", in.ProductID, licentia.CheckProductID)
	if in.LimitKind != nil && *in.LimitKind != licentia.LimitSeats && *in.LimitKind != licentia.LimitMachines {
		rules.Add("/limit_kind", "must be seats or machines")
	}
	if in.OnRefund != nil && *in.OnRefund != licentia.RefundRevoke && *in.OnRefund != licentia.RefundNone {
		rules.Add("/on_refund", "must be revoke or none")
	}
	if v := in.OnSubscriptionEnd; v != nil && *v != licentia.SubscriptionEndExpire && *v != licentia.SubscriptionEndRevoke {
		rules.Add("/on_subscription_end", "must be expire or revoke")
	}
	if u := in.RenewalURL; u != nil && (len([]rune(*u)) > licentia.MaxRenewalURL || licentia.HasControl(*u)) {
		rules.Add("/renewal_url", "must be at most %d characters without control characters", licentia.MaxRenewalURL)
	}
	is.Merge(rules)
	return is
}

// PutMapping creates or replaces a mapping, in the contract's order of
// checks: 400, 404 integration_not_found (unknown, another organization's
// or disconnected), 404 product_not_found, then the provider is asked for
// the product with the integration's key: refused, 422
// provider_token_invalid; no such product, 400 at path.providerProductId;
// no answer, 502 provider_unavailable. Nothing is saved on any error.
func (s *Service) PutMapping(ctx context.Context, actor licentia.Actor, orgID, integrationID, providerProductID string, in PutMapping) (*licentia.Mapping, error) {
	if err := in.Validate(providerProductID).Err(); err != nil {
		return nil, err
	}
	i, err := connected(ctx, s.store, orgID, integrationID)
	if err != nil {
		return nil, fmt.Errorf("put mapping: %w", err)
	}
	if _, err := s.store.Product(ctx, orgID, *in.ProductID); err != nil {
		return nil, fmt.Errorf("put mapping: %w", err)
	}
	if err := s.integrationsReady(); err != nil {
		return nil, err
	}
	if err := s.checkProviderProduct(ctx, i, providerProductID); err != nil {
		return nil, fmt.Errorf("put mapping: %w", err)
	}
	now := s.now()
	m := &licentia.Mapping{IntegrationID: integrationID, ProviderProductID: providerProductID, ProductID: *in.ProductID,
		LimitKind: deref(in.LimitKind, licentia.LimitSeats), LimitCount: deref(in.LimitCount, 1), KeyValidDays: in.KeyValidDays,
		OnRefund: deref(in.OnRefund, licentia.RefundRevoke), OnSubscriptionEnd: deref(in.OnSubscriptionEnd, licentia.SubscriptionEndExpire),
		RenewalURL: in.RenewalURL, CreatedAt: now, UpdatedAt: now}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		// Read again: the integration may have been disconnected, or the
		// product deleted, while the provider was asked.
		if _, err := connected(ctx, tx, orgID, integrationID); err != nil {
			return err
		}
		if _, err := tx.Product(ctx, orgID, m.ProductID); err != nil {
			return err
		}
		m.CreatedAt = now
		created := true
		old, err := tx.Mapping(ctx, orgID, integrationID, providerProductID)
		switch {
		case err == nil:
			m.CreatedAt, created = old.CreatedAt, false
		case licentia.ErrorCode(err) != licentia.CodeMappingNotFound:
			return err
		}
		if err := tx.PutMapping(ctx, m); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditMappingSaved, Actor: actor, At: now},
			map[string]any{"integration_id": integrationID, "provider_product_id": providerProductID, "product_id": m.ProductID,
				"limit_kind": m.LimitKind, "limit_count": m.LimitCount, "key_valid_days": m.KeyValidDays, "on_refund": m.OnRefund,
				"on_subscription_end": m.OnSubscriptionEnd, "renewal_url": m.RenewalURL, "created": created})
	})
	if err != nil {
		return nil, fmt.Errorf("put mapping: %w", err)
	}
	return m, nil
}

// checkProviderProduct asks the provider, with the integration's stored
// key, whether its account knows the product.
func (s *Service) checkProviderProduct(ctx context.Context, i *licentia.Integration, providerProductID string) error {
	c, err := s.client(i.Provider)
	if err != nil {
		return err
	}
	key, err := providers.OpenAPIKey(s.keys, i)
	if err != nil {
		return err
	}
	callCtx, cancel := context.WithTimeout(ctx, providers.Timeout)
	defer cancel()
	err = c.Product(callCtx, key.Reveal(), providerProductID)
	if errors.Is(err, providers.ErrNoSuchProduct) {
		var is licentia.Issues
		is.Add("path.providerProductId", "is not a product of the provider account")
		return is.Err()
	}
	if err != nil {
		return providerError(ctx, err)
	}
	return nil
}

// DeleteMappingRequest is what deletes a mapping: nothing but the path.
type DeleteMappingRequest struct {
	licentia.Decoded
}

// Validate reports the problems of a delete of providerProductID's mapping.
func (in *DeleteMappingRequest) Validate(providerProductID string) licentia.Issues {
	return pathIssues(in.Before, providerProductID)
}

// pathIssues adds the issue of the provider product id, if any, to those
// found before it, after the other path issues: the path is reported
// first, then the query and the body.
func pathIssues(before licentia.Issues, providerProductID string) licentia.Issues {
	msg := licentia.CheckProviderProductID(providerProductID)
	if msg == "" {
		return slices.Clone(before)
	}
	n := 0
	for n < len(before) && strings.HasPrefix(before[n].Path, "path.") {
		n++
	}
	return slices.Insert(slices.Clone(before), n, licentia.Issue{Path: "path.providerProductId", Message: msg})
}

// DeleteMapping removes a mapping of a connected integration; a missing one
// answers mapping_not_found.
func (s *Service) DeleteMapping(ctx context.Context, actor licentia.Actor, orgID, integrationID, providerProductID string, in DeleteMappingRequest) error {
	if err := in.Validate(providerProductID).Err(); err != nil {
		return err
	}
	now := s.now()
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if _, err := connected(ctx, tx, orgID, integrationID); err != nil {
			return err
		}
		if err := s.integrationsReady(); err != nil {
			return err
		}
		if err := tx.DeleteMapping(ctx, orgID, integrationID, providerProductID); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditMappingDeleted, Actor: actor, At: now},
			map[string]any{"integration_id": integrationID, "provider_product_id": providerProductID})
	})
	if err != nil {
		return fmt.Errorf("delete mapping: %w", err)
	}
	return nil
}

package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/store"
)

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
	// SendKeyMail mails the buyer their keys after a paid order; on
	// unless turned off.
	SendKeyMail *bool `json:"send_key_mail"`
	// Features are codes of the product granted to the licences a sale
	// issues, or, with AddsTo, added to the buyer's licence.
	Features []string `json:"features"`
	// AddsTo, the mapping's product id, makes the mapping an add-on.
	AddsTo *string `json:"adds_to" input:"nullable"`
}

// featureRequests are a mapping's codes as grants without an expiry.
func (in *PutMapping) featureRequests() []licentia.GrantRequest {
	out := make([]licentia.GrantRequest, len(in.Features))
	for i, code := range in.Features {
		out[i] = licentia.GrantRequest{FeatureGrant: licentia.FeatureGrant{Code: code}}
	}
	return out
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
	activation.CheckVerdictFits(&rules, "/features", licentia.CheckGrantRequests(&rules, "/features", in.featureRequests(), nil))
	if in.AddsTo != nil {
		// The features are the product's, so only its licences can take
		// them: adds_to names it again, to say the mapping adds.
		if in.ProductID != nil && *in.AddsTo != *in.ProductID {
			rules.Add("/adds_to", "must be the mapping's product_id, whose licences take its features")
		}
		if len(in.Features) == 0 {
			rules.Add("/features", "are required for an add-on, which adds them")
		}
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
	if _, err := resolveGrants(ctx, s.store, orgID, *in.ProductID, "/features", in.featureRequests()); err != nil {
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
		RenewalURL: in.RenewalURL, SendKeyMail: deref(in.SendKeyMail, true), AddsTo: in.AddsTo, CreatedAt: now, UpdatedAt: now}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		// Read again: the integration may have been disconnected, or the
		// product deleted, while the provider was asked.
		if _, err := connected(ctx, tx, orgID, integrationID); err != nil {
			return err
		}
		if _, err := tx.Product(ctx, orgID, m.ProductID); err != nil {
			return err
		}
		// Read again too: a feature may have left the catalogue meanwhile.
		gs, err := resolveGrants(ctx, tx, orgID, m.ProductID, "/features", in.featureRequests())
		if err != nil {
			return err
		}
		m.Features = grantCodes(gs)
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
				"on_subscription_end": m.OnSubscriptionEnd, "renewal_url": m.RenewalURL, "send_key_mail": m.SendKeyMail,
				"features": nonNilCodes(m.Features), "adds_to": m.AddsTo, "created": created})
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
	return withPathIssue(before, "path.providerProductId", licentia.CheckProviderProductID(providerProductID))
}

// withPathIssue adds the issue msg at path, if msg is not "", to those
// found before it, after the other path issues.
func withPathIssue(before licentia.Issues, path, msg string) licentia.Issues {
	if msg == "" {
		return slices.Clone(before)
	}
	n := 0
	for n < len(before) && strings.HasPrefix(before[n].Path, "path.") {
		n++
	}
	return slices.Insert(slices.Clone(before), n, licentia.Issue{Path: path, Message: msg})
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

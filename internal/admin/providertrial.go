package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/store"
)

// ProviderConversion is a subscription leaving its trial for a paid
// period.
type ProviderConversion struct {
	OrgID          string
	IntegrationID  string
	Provider       providers.Name
	SubscriptionID string
}

// Validate reports every problem of a conversion.
func (c *ProviderConversion) Validate() licentia.Issues {
	var is licentia.Issues
	checkProviderCaller(&is, c.OrgID, c.IntegrationID, c.Provider)
	checkProviderRef(&is, "/subscription_id", &c.SubscriptionID)
	return is
}

// ConvertTrial converts a subscription's trial licences in one
// transaction; see ConvertTrialTx.
func (s *Service) ConvertTrial(ctx context.Context, c ProviderConversion) (*ProviderOutcome, error) {
	var out *ProviderOutcome
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		out, err = s.ConvertTrialTx(ctx, tx, c)
		return err
	})
	return out, err
}

// ConvertTrialTx converts the trial licences of a subscription in tx:
// trial_ends_at and expires_at cleared, event licence.trial_converted.
// Found no licence, it keeps the conversion for when the subscription's
// order is issued.
func (s *Service) ConvertTrialTx(ctx context.Context, tx store.Tx, c ProviderConversion) (*ProviderOutcome, error) {
	if err := c.Validate().Err(); err != nil {
		return nil, fmt.Errorf("convert trial: %w", err)
	}
	now := s.now()
	if _, err := lockOrganization(ctx, tx, c.OrgID); err != nil {
		return nil, fmt.Errorf("convert trial: %w", err)
	}
	its, err := tx.ProviderItemsBySubscription(ctx, c.OrgID, c.IntegrationID, c.SubscriptionID)
	if err != nil {
		return nil, fmt.Errorf("convert trial: %w", err)
	}
	if len(its) == 0 {
		err := tx.AddPendingEffect(ctx, &store.PendingEffect{OrgID: c.OrgID, IntegrationID: c.IntegrationID,
			Kind: store.PendingTrialConversion, Ref: c.SubscriptionID, HappenedAt: now})
		if err != nil {
			return nil, fmt.Errorf("convert trial: %w", err)
		}
		return &ProviderOutcome{Pending: true}, nil
	}
	changes, err := s.convertTrials(ctx, tx, providerActor(c.IntegrationID), c.OrgID, its, now)
	if err != nil {
		return nil, fmt.Errorf("convert trial: %w", err)
	}
	return &ProviderOutcome{Changes: changes}, nil
}

// convertTrials converts the stored-active trial licences of its, in
// licence id order; others change nothing. A paid trial converts even
// when its trial end has passed: payment makes it active again.
func (s *Service) convertTrials(ctx context.Context, tx store.Tx, actor licentia.Actor, orgID string, its []store.ProviderItem,
	now time.Time) ([]Change, error) {
	locked, err := lockProviderLicences(ctx, tx, orgID, its)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, before := range locked {
		if before.TrialEndsAt == nil || before.Status != licentia.StatusActive || before.AnonymisedAt != nil {
			out = append(out, Change{Licence: before})
			continue
		}
		after := *before
		after.TrialEndsAt, after.ExpiresAt, after.UpdatedAt = nil, nil, now
		if err := tx.UpdateLicence(ctx, &after); err != nil {
			return nil, err
		}
		out = append(out, Change{Licence: &after, Changed: true})
		if err := events.Record(ctx, tx, actor, &after, nil, licentia.AuditLicenceTrialConverted, licentia.EventLicenceTrialConverted, now,
			map[string]any{"licence_id": after.ID, "trial_ends_at": licentia.FormatTimePtr(before.TrialEndsAt)}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

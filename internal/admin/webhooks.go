package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/webhooks"
)

// MaxDeliveries is the most deliveries one page lists.
const MaxDeliveries = 100

// CreateWebhookEndpoint is what adds an endpoint; nil fields were not
// given.
type CreateWebhookEndpoint struct {
	licentia.Decoded
	URL         *string              `json:"url" input:"required"`
	Description *string              `json:"description"`
	Enabled     *bool                `json:"enabled"`
	EventTypes  []licentia.EventType `json:"event_types" input:"required"`
}

// Validate reports every problem of an add, whose URL it normalises and
// whose repeated event types it drops. A field missing or not read is
// reported alone: the rules are checked on a request read whole.
func (in *CreateWebhookEndpoint) Validate(baseHost string) licentia.Issues {
	if is := append(slices.Clone(in.Before), licentia.CheckFields(in)...); len(is) > 0 {
		return is
	}
	return endpointRules(&in.URL, &in.EventTypes, in.Description, baseHost)
}

// UpdateWebhookEndpoint is what changes an endpoint; nil fields stay.
type UpdateWebhookEndpoint struct {
	licentia.Decoded
	URL         *string              `json:"url"`
	Description *string              `json:"description"`
	Enabled     *bool                `json:"enabled"`
	EventTypes  []licentia.EventType `json:"event_types"`
}

// Validate reports every problem of a change, which needs at least one
// field, as CreateWebhookEndpoint's Validate does for an add.
func (in *UpdateWebhookEndpoint) Validate(baseHost string) licentia.Issues {
	if is := append(slices.Clone(in.Before), licentia.CheckFields(in)...); len(is) > 0 {
		return is
	}
	is := endpointRules(&in.URL, &in.EventTypes, in.Description, baseHost)
	if in.URL == nil && in.EventTypes == nil && in.Description == nil && in.Enabled == nil {
		is.Add("", "give at least one of url, event_types, description, enabled")
	}
	return is
}

// endpointRules checks the fields of an add or a change that were given,
// normalising the URL and dropping repeated event types.
func endpointRules(url **string, types *[]licentia.EventType, description *string, baseHost string) licentia.Issues {
	var is licentia.Issues
	if *url != nil {
		u, err := webhooks.NormaliseURL(**url, baseHost)
		if err != nil {
			if e, ok := errors.AsType[*licentia.Error](err); ok {
				if list, ok := e.Details["issues"].([]licentia.Issue); ok {
					is = append(is, list...)
				}
			}
			if len(is) == 0 {
				is.Add("/url", "is not an acceptable webhook URL")
			}
		} else {
			*url = &u
		}
	}
	if *types != nil {
		if len(*types) == 0 {
			is.Add("/event_types", "must name at least one event type")
		}
		for i, t := range *types {
			if !slices.Contains(licentia.EventTypes, t) {
				is.Add(fmt.Sprintf("/event_types/%d", i), "must be one of the event types")
			}
		}
		*types = uniqueTypes(*types)
	}
	if description != nil && (len([]rune(*description)) > 500 || licentia.HasControl(*description)) {
		is.Add("/description", "must be at most 500 characters without control characters")
	}
	return is
}

// uniqueTypes drops repeated types, keeping the first of each. It never
// returns nil for a given list, so an empty list still reads as given.
func uniqueTypes(ts []licentia.EventType) []licentia.EventType {
	out := make([]licentia.EventType, 0, len(ts))
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// baseHost is the host of LICENTIA_BASE_URL; endpoints may not be under it.
func (s *Service) baseHost() string { return webhooks.HostOf(s.baseURL) }

// webhooksReady answers 503 webhooks_not_configured while LICENTIA_BASE_URL
// is unset or the master key is unavailable.
func (s *Service) webhooksReady() error {
	if s.baseURL == "" {
		return licentia.Errorf(licentia.CodeWebhooksNotConfigured, "Webhooks are not configured on this service: set LICENTIA_BASE_URL to its public address.")
	}
	if _, err := s.keys.Master(); err != nil {
		return licentia.Errorf(licentia.CodeWebhooksNotConfigured, "Webhooks are not configured on this service: its master key (LICENTIA_MASTER_KEY_FILE) is unavailable.")
	}
	return nil
}

// WebhookEndpoints lists the caller's endpoints, oldest first.
func (s *Service) WebhookEndpoints(ctx context.Context, orgID string) ([]licentia.WebhookEndpoint, error) {
	if err := s.webhooksReady(); err != nil {
		return nil, err
	}
	return s.store.WebhookEndpoints(ctx, orgID)
}

// WebhookEndpoint reads one of the caller's endpoints.
func (s *Service) WebhookEndpoint(ctx context.Context, orgID, id string) (*licentia.WebhookEndpoint, error) {
	e, err := s.store.WebhookEndpoint(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	return e, s.webhooksReady()
}

// AddWebhookEndpoint adds an endpoint with a new secret, shown once. Every
// endpoint counts against the plan, turned-off ones included.
func (s *Service) AddWebhookEndpoint(ctx context.Context, actor licentia.Actor, orgID string, in CreateWebhookEndpoint) (*licentia.WebhookEndpoint, webhooks.Secret, error) {
	if err := in.Validate(s.baseHost()).Err(); err != nil {
		return nil, webhooks.Secret{}, err
	}
	now := s.now()
	e := &licentia.WebhookEndpoint{ID: licentia.NewID(), OrgID: orgID, URL: *in.URL, EventTypes: in.EventTypes,
		Description: deref(in.Description, ""), Enabled: deref(in.Enabled, true), CreatedAt: now, UpdatedAt: now}
	if !e.Enabled {
		r := licentia.DisabledByMaker
		e.DisabledReason = &r
	}
	var secret webhooks.Secret
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		org, err := lockOrganization(ctx, tx, orgID)
		if err != nil {
			return err
		}
		if err := s.checkPlan(ctx, tx, org, resourceWebhookEndpoints, now); err != nil {
			return err
		}
		if err := s.webhooksReady(); err != nil {
			return err
		}
		master, err := s.sealingKey(ctx, tx)
		if err != nil {
			return err
		}
		var rec *licentia.WebhookSecret
		secret, rec = webhooks.NewSecret(master, e.ID, now)
		if err := tx.CreateWebhookEndpoint(ctx, e, rec); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditWebhookEndpointCreated, Actor: actor, At: now},
			map[string]any{"webhook_endpoint_id": e.ID, "url": e.URL, "event_types": e.EventTypes, "enabled": e.Enabled})
	})
	if err != nil {
		return nil, webhooks.Secret{}, fmt.Errorf("add webhook endpoint: %w", err)
	}
	return e, secret, nil
}

// UpdateWebhookEndpoint changes an endpoint. Turning it on clears its
// disabled_reason; turning it off by hand records disabled_by_maker. A
// change that changes nothing writes nothing: no updated_at, no audit entry.
func (s *Service) UpdateWebhookEndpoint(ctx context.Context, actor licentia.Actor, orgID, id string, in UpdateWebhookEndpoint) (*licentia.WebhookEndpoint, error) {
	if err := in.Validate(s.baseHost()).Err(); err != nil {
		return nil, err
	}
	now := s.now()
	var e *licentia.WebhookEndpoint
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if e, err = tx.WebhookEndpoint(ctx, orgID, id); err != nil {
			return err
		}
		if err := s.webhooksReady(); err != nil {
			return err
		}
		changes := applyEndpointChange(e, in)
		if len(changes) == 0 {
			return nil
		}
		e.UpdatedAt = now
		if err := tx.UpdateWebhookEndpoint(ctx, e); err != nil {
			return err
		}
		changes["webhook_endpoint_id"] = e.ID
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditWebhookEndpointUpdated, Actor: actor, At: now}, changes)
	})
	if err != nil {
		return nil, fmt.Errorf("update webhook endpoint: %w", err)
	}
	return e, nil
}

// applyEndpointChange applies in to e and returns the fields it changed,
// for the audit entry.
func applyEndpointChange(e *licentia.WebhookEndpoint, in UpdateWebhookEndpoint) map[string]any {
	changes := map[string]any{}
	if in.URL != nil && *in.URL != e.URL {
		e.URL, changes["url"] = *in.URL, *in.URL
	}
	if in.EventTypes != nil && !slices.Equal(in.EventTypes, e.EventTypes) {
		e.EventTypes, changes["event_types"] = in.EventTypes, in.EventTypes
	}
	if in.Description != nil && *in.Description != e.Description {
		e.Description, changes["description"] = *in.Description, *in.Description
	}
	if in.Enabled != nil && *in.Enabled != e.Enabled {
		e.Enabled, e.DisabledReason, changes["enabled"] = *in.Enabled, nil, *in.Enabled
		if !e.Enabled {
			r := licentia.DisabledByMaker
			e.DisabledReason = &r
		}
	}
	return changes
}

// DeleteWebhookEndpoint removes an endpoint, its secrets and its
// deliveries; pending attempts stop.
func (s *Service) DeleteWebhookEndpoint(ctx context.Context, actor licentia.Actor, orgID, id string) error {
	now := s.now()
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.WebhookEndpoint(ctx, orgID, id); err != nil {
			return err
		}
		if err := s.webhooksReady(); err != nil {
			return err
		}
		if err := tx.DeleteWebhookEndpoint(ctx, orgID, id); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditWebhookEndpointDeleted, Actor: actor, At: now},
			map[string]any{"webhook_endpoint_id": id})
	})
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	return nil
}

// RotateWebhookSecret replaces an endpoint's secret; the old one still signs
// for 24 hours.
func (s *Service) RotateWebhookSecret(ctx context.Context, actor licentia.Actor, orgID, id string) (*licentia.WebhookEndpoint, webhooks.Secret, error) {
	now := s.now()
	var e *licentia.WebhookEndpoint
	var secret webhooks.Secret
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if e, err = tx.WebhookEndpoint(ctx, orgID, id); err != nil {
			return err
		}
		if err := s.webhooksReady(); err != nil {
			return err
		}
		master, err := s.sealingKey(ctx, tx)
		if err != nil {
			return err
		}
		var rec *licentia.WebhookSecret
		secret, rec = webhooks.NewSecret(master, e.ID, now)
		if err := tx.ReplaceWebhookSecret(ctx, rec, now); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditWebhookEndpointSecretRotated, Actor: actor, At: now},
			map[string]any{"webhook_endpoint_id": id})
	})
	if err != nil {
		return nil, webhooks.Secret{}, fmt.Errorf("rotate webhook secret: %w", err)
	}
	return e, secret, nil
}

// Deliveries lists an endpoint's deliveries newest first, a page at a time;
// next is the cursor of the following page, or nil on the last.
func (s *Service) Deliveries(ctx context.Context, orgID, endpointID string, after *string) (ds []licentia.Delivery, next *string, err error) {
	if _, err := s.WebhookEndpoint(ctx, orgID, endpointID); err != nil {
		return nil, nil, err
	}
	if after != nil {
		// A cursor names one of the endpoint's deliveries; a store that
		// cannot answer is not the caller's mistake.
		_, err := s.store.Delivery(ctx, orgID, endpointID, *after)
		if e, ok := errors.AsType[*licentia.Error](err); ok && e.Code == licentia.CodeWebhookDeliveryNotFound {
			var is licentia.Issues
			is.Add("query.cursor", "is not a cursor of this endpoint's deliveries")
			return nil, nil, is.Err()
		}
		if err != nil {
			return nil, nil, fmt.Errorf("list deliveries: %w", err)
		}
	}
	ds, err = s.store.Deliveries(ctx, orgID, endpointID, after, MaxDeliveries+1)
	if err != nil {
		return nil, nil, err
	}
	if len(ds) > MaxDeliveries {
		ds = ds[:MaxDeliveries]
		next = &ds[MaxDeliveries-1].ID
	}
	return ds, next, nil
}

// RetryDelivery queues a delivery to be sent again now and returns it.
func (s *Service) RetryDelivery(ctx context.Context, actor licentia.Actor, orgID, endpointID, id string) (*licentia.Delivery, error) {
	now := s.now()
	var d *licentia.Delivery
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.WebhookEndpoint(ctx, orgID, endpointID); err != nil {
			return err
		}
		if _, err := tx.Delivery(ctx, orgID, endpointID, id); err != nil {
			return err
		}
		if err := s.webhooksReady(); err != nil {
			return err
		}
		if err := tx.RequeueDelivery(ctx, orgID, endpointID, id, now); err != nil {
			return err
		}
		var err error
		if d, err = tx.Delivery(ctx, orgID, endpointID, id); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditWebhookDeliveryRetried, Actor: actor, At: now},
			map[string]any{"webhook_endpoint_id": endpointID, "delivery_id": id})
	})
	if err != nil {
		return nil, fmt.Errorf("retry delivery: %w", err)
	}
	return d, nil
}

package admin

import (
	"context"
	"fmt"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// SendTestEvent queues an endpoint.test event to the endpoint alone, signed
// and retried like any delivery, and returns its delivery. An endpoint
// that is turned off is refused: nothing would be sent.
func (s *Service) SendTestEvent(ctx context.Context, actor licentia.Actor, orgID, endpointID string) (*licentia.Delivery, error) {
	now := s.now()
	var d *licentia.Delivery
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		ep, err := tx.WebhookEndpoint(ctx, orgID, endpointID)
		if err != nil {
			return err
		}
		if err := s.webhooksReady(); err != nil {
			return err
		}
		if !ep.Enabled {
			var is licentia.Issues
			is.Add("enabled", "the endpoint is turned off; turn it on to send it a test event")
			return is.Err()
		}
		if d, err = events.WriteEndpointTest(ctx, tx, now, ep); err != nil {
			return err
		}
		return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: orgID, Action: licentia.AuditWebhookEndpointTested, Actor: actor, At: now},
			map[string]any{"webhook_endpoint_id": endpointID, "delivery_id": d.ID})
	})
	if err != nil {
		return nil, fmt.Errorf("send test event: %w", err)
	}
	return d, nil
}

// DeliveryBodies reads the request body of each of an endpoint's listed
// deliveries (its event's body, sent byte for byte), by event id. An event
// deleted meanwhile is left out.
func (s *Service) DeliveryBodies(ctx context.Context, ds []licentia.Delivery) (map[string]string, error) {
	out := map[string]string{}
	for _, d := range ds {
		if _, ok := out[d.EventID]; ok {
			continue
		}
		e, err := s.store.Event(ctx, d.EventID)
		switch {
		case licentia.ErrorCode(err) == licentia.CodeNotFound:
			continue
		case err != nil:
			return nil, fmt.Errorf("read delivery bodies: %w", err)
		}
		out[d.EventID] = string(e.Body)
	}
	return out, nil
}

package events

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// endpointTestBody is the body of endpoint.test: it names the endpoint and
// nothing else, so a receiver can check its signature code on it.
type endpointTestBody struct {
	Type      licentia.EventType `json:"type"`
	Timestamp string             `json:"timestamp"`
	Data      struct {
		WebhookEndpoint struct {
			ID string `json:"id"`
		} `json:"webhook_endpoint"`
	} `json:"data"`
}

// WriteEndpointTest records endpoint.test in tx and queues its one
// delivery, to ep alone: no endpoint subscribes to it, so QueueDeliveries,
// which would send it to the subscribers, is not used.
func WriteEndpointTest(ctx context.Context, tx store.Tx, at time.Time, ep *licentia.WebhookEndpoint) (*licentia.Delivery, error) {
	b := endpointTestBody{Type: licentia.EventEndpointTest, Timestamp: licentia.FormatTime(at)}
	b.Data.WebhookEndpoint.ID = ep.ID
	e, err := encode(ep.OrgID, nil, b.Type, at, b)
	if err != nil {
		return nil, err
	}
	if err := tx.InsertEvent(ctx, e); err != nil {
		return nil, err
	}
	due := e.At
	d := licentia.Delivery{ID: licentia.NewID(), OrgID: e.OrgID, EndpointID: ep.ID, EventID: e.ID, EventType: e.Type,
		Status: licentia.DeliveryPending, NextAttemptAt: &due, CreatedAt: e.At}
	if err := tx.CreateDeliveries(ctx, []licentia.Delivery{d}); err != nil {
		return nil, err
	}
	return &d, nil
}

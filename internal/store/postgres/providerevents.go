package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
)

func (r reader) ProviderEvents(ctx context.Context, orgID, integrationID string, limit int) ([]licentia.ProviderEvent, error) {
	if !isID(orgID) || !isID(integrationID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT e.integration_id, e.event_id, e.event_type, e.outcome, e.order_id,
		e.subscription_id, e.received_at FROM provider_events e JOIN integrations i ON i.id = e.integration_id
		WHERE i.org_id = $1 AND e.integration_id = $2 ORDER BY e.received_at DESC, e.event_id DESC LIMIT $3`,
		orgID, integrationID, limit)
	if err != nil {
		return nil, fmt.Errorf("list provider events: %w", err)
	}
	out, err := collect(rows, func(row pgx.Row) (*licentia.ProviderEvent, error) {
		var e licentia.ProviderEvent
		err := row.Scan(&e.IntegrationID, &e.EventID, &e.Type, &e.Outcome, &e.OrderID, &e.SubscriptionID, &e.ReceivedAt)
		e.ReceivedAt = e.ReceivedAt.UTC()
		return &e, err
	})
	if err != nil {
		return nil, fmt.Errorf("list provider events: %w", err)
	}
	return out, nil
}

func (t *tx) NoteProviderEvent(ctx context.Context, e licentia.ProviderEvent) error {
	_, err := t.tx.Exec(ctx, `UPDATE provider_events SET event_type = $1, outcome = $2, order_id = $3, subscription_id = $4
		WHERE integration_id = $5 AND event_id = $6`, e.Type, string(e.Outcome), e.OrderID, e.SubscriptionID, e.IntegrationID, e.EventID)
	if err != nil {
		return fmt.Errorf("note provider event: %w", err)
	}
	return nil
}

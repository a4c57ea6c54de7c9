package sqlite

import (
	"context"
	"fmt"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (r reader) ProviderEvents(ctx context.Context, orgID, integrationID string, limit int) ([]licentia.ProviderEvent, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT e.integration_id, e.event_id, e.event_type, e.outcome, e.order_id,
		e.subscription_id, e.received_at FROM provider_events e JOIN integrations i ON i.id = e.integration_id
		WHERE i.org_id = ? AND e.integration_id = ? ORDER BY e.received_at DESC, e.event_id DESC LIMIT ?`,
		orgID, integrationID, limit)
	if err != nil {
		return nil, fmt.Errorf("list provider events: %w", err)
	}
	defer rows.Close()
	var out []licentia.ProviderEvent
	for rows.Next() {
		var e licentia.ProviderEvent
		var received int64
		if err := rows.Scan(&e.IntegrationID, &e.EventID, &e.Type, &e.Outcome, &e.OrderID, &e.SubscriptionID, &received); err != nil {
			return nil, fmt.Errorf("list provider events: %w", err)
		}
		e.ReceivedAt = store.FromMillis(received)
		out = append(out, e)
	}
	return out, rows.Err()
}

func (t *tx) NoteProviderEvent(ctx context.Context, e licentia.ProviderEvent) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE provider_events SET event_type = ?, outcome = ?, order_id = ?, subscription_id = ?
		WHERE integration_id = ? AND event_id = ?`, e.Type, e.Outcome, e.OrderID, e.SubscriptionID, e.IntegrationID, e.EventID)
	if err != nil {
		return fmt.Errorf("note provider event: %w", err)
	}
	return nil
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const heldOrderColumns = `id, org_id, integration_id, provider, event_id, order_key, order_id, checkout_id, order_number,
	customer_id, subscription_id, email, subscription, trial_ends_at, reason, items, raw_body, status, created_at, settled_at`

func heldOrderNotFound() error { return store.NotFound(licentia.CodeNotFound, "Held order") }

func scanHeldOrder(row interface{ Scan(...any) error }) (*licentia.HeldOrder, error) {
	var h licentia.HeldOrder
	var items string
	var created int64
	var trialEnds, settled *int64
	err := row.Scan(&h.ID, &h.OrgID, &h.IntegrationID, &h.Provider, &h.EventID, &h.OrderKey, &h.OrderID, &h.CheckoutID,
		&h.OrderNumber, &h.CustomerID, &h.SubscriptionID, &h.Email, &h.Subscription, &trialEnds, &h.Reason, &items,
		&h.RawBody, &h.Status, &created, &settled)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, heldOrderNotFound()
	}
	if err != nil {
		return nil, err
	}
	if h.Items, err = store.ParseHeldItems(items); err != nil {
		return nil, err
	}
	h.TrialEndsAt, h.CreatedAt, h.SettledAt = store.FromMillisPtr(trialEnds), store.FromMillis(created), store.FromMillisPtr(settled)
	return &h, nil
}

func (r reader) HeldOrders(ctx context.Context, orgID string) ([]licentia.HeldOrder, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+heldOrderColumns+` FROM held_orders
		WHERE org_id = ? AND status = 'held' ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list held orders: %w", err)
	}
	defer rows.Close()
	var out []licentia.HeldOrder
	for rows.Next() {
		h, err := scanHeldOrder(rows)
		if err != nil {
			return nil, fmt.Errorf("list held orders: %w", err)
		}
		out = append(out, *h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list held orders: %w", err)
	}
	return out, nil
}

func (r reader) CountHeldOrders(ctx context.Context, orgID string) (int64, error) {
	var n int64
	err := r.q.QueryRowContext(ctx, `SELECT count(*) FROM held_orders WHERE org_id = ? AND status = 'held'`, orgID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count held orders: %w", err)
	}
	return n, nil
}

func (r reader) HeldOrder(ctx context.Context, orgID, id string) (*licentia.HeldOrder, error) {
	h, err := scanHeldOrder(r.q.QueryRowContext(ctx, `SELECT `+heldOrderColumns+` FROM held_orders
		WHERE org_id = ? AND id = ? AND status = 'held'`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read held order: %w", err)
	}
	return h, nil
}

func (t *tx) CreateHeldOrder(ctx context.Context, h *licentia.HeldOrder) (bool, error) {
	items, err := store.HeldItemsJSON(h.Items)
	if err != nil {
		return false, fmt.Errorf("create held order: %w", err)
	}
	res, err := t.tx.ExecContext(ctx, `INSERT INTO held_orders (`+heldOrderColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (integration_id, order_key) DO NOTHING`,
		h.ID, h.OrgID, h.IntegrationID, h.Provider, h.EventID, h.OrderKey, h.OrderID, h.CheckoutID, h.OrderNumber,
		h.CustomerID, h.SubscriptionID, h.Email, h.Subscription, store.MillisPtr(h.TrialEndsAt), h.Reason, items,
		h.RawBody, h.Status, store.Millis(h.CreatedAt), store.MillisPtr(h.SettledAt))
	if err != nil {
		return false, fmt.Errorf("create held order: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (t *tx) SettleHeldOrder(ctx context.Context, orgID, id string, status licentia.HeldStatus, at time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE held_orders SET status = ?, settled_at = ?, raw_body = NULL
		WHERE org_id = ? AND id = ? AND status = 'held'`, status, store.Millis(at), orgID, id)
	if err != nil {
		return false, fmt.Errorf("settle held order: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

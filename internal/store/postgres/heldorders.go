package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

const heldOrderColumns = `id, org_id, integration_id, provider, event_id, order_key, order_id, checkout_id, order_number,
	customer_id, subscription_id, email, subscription, trial_ends_at, reason, items, raw_body, status, created_at, settled_at`

func heldOrderNotFound() error { return store.NotFound(licentia.CodeNotFound, "Held order") }

func scanHeldOrder(row pgx.Row) (*licentia.HeldOrder, error) {
	var h licentia.HeldOrder
	var items string
	err := row.Scan(&h.ID, &h.OrgID, &h.IntegrationID, &h.Provider, &h.EventID, &h.OrderKey, &h.OrderID, &h.CheckoutID,
		&h.OrderNumber, &h.CustomerID, &h.SubscriptionID, &h.Email, &h.Subscription, &h.TrialEndsAt, &h.Reason, &items,
		&h.RawBody, &h.Status, &h.CreatedAt, &h.SettledAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, heldOrderNotFound()
	}
	if err != nil {
		return nil, err
	}
	if h.Items, err = store.ParseHeldItems(items); err != nil {
		return nil, err
	}
	h.TrialEndsAt, h.CreatedAt, h.SettledAt = utcPtr(h.TrialEndsAt), h.CreatedAt.UTC(), utcPtr(h.SettledAt)
	return &h, nil
}

func (r reader) HeldOrders(ctx context.Context, orgID string) ([]licentia.HeldOrder, error) {
	if !isID(orgID) {
		return nil, nil
	}
	rows, err := r.q.Query(ctx, `SELECT `+heldOrderColumns+` FROM held_orders
		WHERE org_id = $1 AND status = 'held' ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list held orders: %w", err)
	}
	out, err := collect(rows, scanHeldOrder)
	if err != nil {
		return nil, fmt.Errorf("list held orders: %w", err)
	}
	return out, nil
}

func (r reader) CountHeldOrders(ctx context.Context, orgID string) (int64, error) {
	if !isID(orgID) {
		return 0, nil
	}
	var n int64
	err := r.q.QueryRow(ctx, `SELECT count(*) FROM held_orders WHERE org_id = $1 AND status = 'held'`, orgID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count held orders: %w", err)
	}
	return n, nil
}

func (r reader) HeldOrder(ctx context.Context, orgID, id string) (*licentia.HeldOrder, error) {
	if !isID(orgID) || !isID(id) {
		return nil, fmt.Errorf("read held order: %w", heldOrderNotFound())
	}
	h, err := scanHeldOrder(r.q.QueryRow(ctx, `SELECT `+heldOrderColumns+` FROM held_orders
		WHERE org_id = $1 AND id = $2 AND status = 'held'`, orgID, id))
	if err != nil {
		return nil, fmt.Errorf("read held order: %w", err)
	}
	return h, nil
}

// CreateHeldOrder inserts with ON CONFLICT DO NOTHING: of two transactions
// holding one order, the second waits for the first and then inserts
// nothing, where a unique violation would abort it.
func (t *tx) CreateHeldOrder(ctx context.Context, h *licentia.HeldOrder) (bool, error) {
	items, err := store.HeldItemsJSON(h.Items)
	if err != nil {
		return false, fmt.Errorf("create held order: %w", err)
	}
	tag, err := t.tx.Exec(ctx, `INSERT INTO held_orders (`+heldOrderColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
		ON CONFLICT (integration_id, order_key) DO NOTHING`,
		h.ID, h.OrgID, h.IntegrationID, h.Provider, h.EventID, h.OrderKey, h.OrderID, h.CheckoutID, h.OrderNumber,
		h.CustomerID, h.SubscriptionID, h.Email, h.Subscription, msPtr(h.TrialEndsAt), h.Reason, items,
		h.RawBody, h.Status, ms(h.CreatedAt), msPtr(h.SettledAt))
	if err != nil {
		return false, fmt.Errorf("create held order: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// SettleHeldOrder is one conditional UPDATE: of two transactions settling
// one order, the second waits for the first's row lock, then finds the
// order no longer held and changes nothing.
func (t *tx) SettleHeldOrder(ctx context.Context, orgID, id string, status licentia.HeldStatus, at time.Time) (bool, error) {
	if !isID(orgID) || !isID(id) {
		return false, nil
	}
	tag, err := t.tx.Exec(ctx, `UPDATE held_orders SET status = $1, settled_at = $2, raw_body = NULL
		WHERE org_id = $3 AND id = $4 AND status = 'held'`, status, ms(at), orgID, id)
	if err != nil {
		return false, fmt.Errorf("settle held order: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

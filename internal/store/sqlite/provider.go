package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (t *tx) ProviderItemIssued(ctx context.Context, integrationID, orderKey, providerProductID string) (bool, error) {
	var issued bool
	err := t.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM provider_items
		WHERE integration_id = ? AND order_key = ? AND provider_product_id = ?)`,
		integrationID, orderKey, providerProductID).Scan(&issued)
	if err != nil {
		return false, fmt.Errorf("check provider item: %w", err)
	}
	return issued, nil
}

func (t *tx) CreateProviderItem(ctx context.Context, it *store.ProviderItem) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO provider_items (licence_id, org_id, integration_id, order_key,
		provider_product_id, on_refund, on_subscription_end) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		it.LicenceID, it.OrgID, it.IntegrationID, it.OrderKey, it.ProviderProductID, it.OnRefund, it.OnSubscriptionEnd)
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The order item has issued its licence already.")
	}
	if err != nil {
		return fmt.Errorf("create provider item: %w", err)
	}
	return nil
}

const providerItemColumns = `i.licence_id, i.org_id, i.integration_id, i.order_key, i.provider_product_id,
	i.on_refund, i.on_subscription_end`

// The items of an order or a subscription are read from its few licences,
// found through their own indexes. CROSS JOIN keeps SQLite's planner,
// which has no statistics, from starting at provider_items_by_order
// instead and reading every item of the integration.
const (
	providerItemsFrom         = ` FROM licences l CROSS JOIN provider_items i ON i.licence_id = l.id WHERE `
	providerItemsByOrderQuery = `SELECT ` + providerItemColumns + providerItemsFrom + `(l.provider_order_id = ?1 OR l.provider_checkout_id = ?1)
		AND i.org_id = ?2 AND i.integration_id = ?3 ORDER BY l.id`
	providerItemsBySubscriptionQuery = `SELECT ` + providerItemColumns + providerItemsFrom + `l.provider_subscription_id = ?1
		AND i.org_id = ?2 AND i.integration_id = ?3 ORDER BY l.id`
)

func (t *tx) queryProviderItems(ctx context.Context, query string, args ...any) ([]store.ProviderItem, error) {
	rows, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ProviderItem
	for rows.Next() {
		var it store.ProviderItem
		if err := rows.Scan(&it.LicenceID, &it.OrgID, &it.IntegrationID, &it.OrderKey, &it.ProviderProductID,
			&it.OnRefund, &it.OnSubscriptionEnd); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

func (t *tx) ProviderItemsByOrder(ctx context.Context, orgID, integrationID, orderID string) ([]store.ProviderItem, error) {
	its, err := t.queryProviderItems(ctx, providerItemsByOrderQuery, orderID, orgID, integrationID)
	if err != nil {
		return nil, fmt.Errorf("read provider items of order: %w", err)
	}
	return its, nil
}

func (t *tx) ProviderItemsBySubscription(ctx context.Context, orgID, integrationID, subscriptionID string) ([]store.ProviderItem, error) {
	its, err := t.queryProviderItems(ctx, providerItemsBySubscriptionQuery, subscriptionID, orgID, integrationID)
	if err != nil {
		return nil, fmt.Errorf("read provider items of subscription: %w", err)
	}
	return its, nil
}

func (t *tx) AddPendingEffect(ctx context.Context, e *store.PendingEffect) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO provider_pending_effects (integration_id, kind, ref, org_id, happened_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		e.IntegrationID, string(e.Kind), e.Ref, e.OrgID, store.Millis(e.HappenedAt))
	if err != nil {
		return fmt.Errorf("add pending effect: %w", err)
	}
	return nil
}

func (t *tx) TakePendingEffect(ctx context.Context, orgID, integrationID string, kind store.PendingKind, ref string) (store.PendingEffect, bool, error) {
	e := store.PendingEffect{OrgID: orgID, IntegrationID: integrationID, Kind: kind, Ref: ref}
	var at int64
	err := t.tx.QueryRowContext(ctx, `DELETE FROM provider_pending_effects
		WHERE integration_id = ? AND kind = ? AND ref = ? AND org_id = ? RETURNING happened_at`,
		integrationID, string(kind), ref, orgID).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return e, false, nil
	}
	if err != nil {
		return e, false, fmt.Errorf("take pending effect: %w", err)
	}
	e.HappenedAt = store.FromMillis(at)
	return e, true, nil
}

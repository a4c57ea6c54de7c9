package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (t *tx) ProviderItemIssued(ctx context.Context, integrationID, orderKey, providerProductID string) (bool, error) {
	if !isID(integrationID) || !isText(orderKey) || !isText(providerProductID) {
		return false, nil
	}
	var issued bool
	err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM provider_items
		WHERE integration_id = $1 AND order_key = $2 AND provider_product_id = $3)`,
		integrationID, orderKey, providerProductID).Scan(&issued)
	if err != nil {
		return false, fmt.Errorf("check provider item: %w", err)
	}
	return issued, nil
}

func (t *tx) CreateProviderItem(ctx context.Context, it *store.ProviderItem) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO provider_items (licence_id, org_id, integration_id, order_key,
		provider_product_id, on_refund, on_subscription_end) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
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

func (t *tx) queryProviderItems(ctx context.Context, query string, args ...any) ([]store.ProviderItem, error) {
	rows, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(row pgx.Row) (*store.ProviderItem, error) {
		var it store.ProviderItem
		err := row.Scan(&it.LicenceID, &it.OrgID, &it.IntegrationID, &it.OrderKey, &it.ProviderProductID,
			&it.OnRefund, &it.OnSubscriptionEnd)
		return &it, err
	})
}

func (t *tx) ProviderItemsByOrder(ctx context.Context, orgID, integrationID, orderID string) ([]store.ProviderItem, error) {
	if !isID(orgID) || !isID(integrationID) || !isText(orderID) {
		return nil, nil
	}
	its, err := t.queryProviderItems(ctx, `SELECT `+providerItemColumns+` FROM licences l
		JOIN provider_items i ON i.licence_id = l.id
		WHERE (l.provider_order_id = $3 OR l.provider_checkout_id = $3)
		AND i.org_id = $1 AND i.integration_id = $2 ORDER BY l.id`, orgID, integrationID, orderID)
	if err != nil {
		return nil, fmt.Errorf("read provider items of order: %w", err)
	}
	return its, nil
}

func (t *tx) ProviderItemsBySubscription(ctx context.Context, orgID, integrationID, subscriptionID string) ([]store.ProviderItem, error) {
	if !isID(orgID) || !isID(integrationID) || !isText(subscriptionID) {
		return nil, nil
	}
	its, err := t.queryProviderItems(ctx, `SELECT `+providerItemColumns+` FROM licences l
		JOIN provider_items i ON i.licence_id = l.id
		WHERE l.provider_subscription_id = $3 AND i.org_id = $1 AND i.integration_id = $2 ORDER BY l.id`,
		orgID, integrationID, subscriptionID)
	if err != nil {
		return nil, fmt.Errorf("read provider items of subscription: %w", err)
	}
	return its, nil
}

func (t *tx) AddPendingEffect(ctx context.Context, e *store.PendingEffect) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO provider_pending_effects (integration_id, kind, ref, org_id, happened_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
		e.IntegrationID, string(e.Kind), e.Ref, e.OrgID, ms(e.HappenedAt))
	if err != nil {
		return fmt.Errorf("add pending effect: %w", err)
	}
	return nil
}

func (t *tx) TakePendingEffect(ctx context.Context, orgID, integrationID string, kind store.PendingKind, ref string) (store.PendingEffect, bool, error) {
	e := store.PendingEffect{OrgID: orgID, IntegrationID: integrationID, Kind: kind, Ref: ref}
	if !isID(orgID) || !isID(integrationID) || !isText(ref) {
		return e, false, nil
	}
	err := t.tx.QueryRow(ctx, `DELETE FROM provider_pending_effects
		WHERE integration_id = $1 AND kind = $2 AND ref = $3 AND org_id = $4 RETURNING happened_at`,
		integrationID, string(kind), ref, orgID).Scan(&e.HappenedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, false, nil
	}
	if err != nil {
		return e, false, fmt.Errorf("take pending effect: %w", err)
	}
	e.HappenedAt = e.HappenedAt.UTC()
	return e, true, nil
}

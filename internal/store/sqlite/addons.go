package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (t *tx) CreateProviderAddon(ctx context.Context, a *store.ProviderAddon) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO provider_addons (integration_id, order_key, provider_product_id, org_id,
		order_id, checkout_id, subscription_id, licence_id, features, added, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.IntegrationID, a.OrderKey, a.ProviderProductID, a.OrgID, a.OrderID, a.CheckoutID, a.SubscriptionID, a.LicenceID,
		store.EncodeCodes(a.Features), store.EncodeCodes(a.Added), store.MillisPtr(a.EndedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The add-on order item is recorded already.")
	}
	if err != nil {
		return fmt.Errorf("create provider add-on: %w", err)
	}
	return nil
}

func (t *tx) ProviderAddonRecorded(ctx context.Context, integrationID, orderKey, providerProductID string) (bool, error) {
	var found bool
	err := t.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM provider_addons
		WHERE integration_id = ? AND order_key = ? AND provider_product_id = ?)`,
		integrationID, orderKey, providerProductID).Scan(&found)
	if err != nil {
		return false, fmt.Errorf("check provider add-on: %w", err)
	}
	return found, nil
}

const addonColumns = `integration_id, order_key, provider_product_id, org_id, order_id, checkout_id, subscription_id,
	licence_id, features, added, ended_at`

func (t *tx) queryAddons(ctx context.Context, what, query string, args ...any) ([]store.ProviderAddon, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+addonColumns+` FROM provider_addons WHERE `+query, args...)
	if err != nil {
		return nil, fmt.Errorf("read provider add-ons of %s: %w", what, err)
	}
	defer rows.Close()
	var out []store.ProviderAddon
	for rows.Next() {
		var a store.ProviderAddon
		var features, added string
		var ended sql.Null[int64]
		if err := rows.Scan(&a.IntegrationID, &a.OrderKey, &a.ProviderProductID, &a.OrgID, &a.OrderID, &a.CheckoutID,
			&a.SubscriptionID, &a.LicenceID, &features, &added, &ended); err != nil {
			return nil, fmt.Errorf("read provider add-ons of %s: %w", what, err)
		}
		if a.Features, err = store.DecodeCodes(features); err != nil {
			return nil, err
		}
		if a.Added, err = store.DecodeCodes(added); err != nil {
			return nil, err
		}
		a.EndedAt = instant(ended)
		out = append(out, a)
	}
	return out, rows.Err()
}

func (t *tx) ProviderAddonsByOrder(ctx context.Context, orgID, integrationID, orderID string) ([]store.ProviderAddon, error) {
	return t.queryAddons(ctx, "order", `integration_id = ?1 AND org_id = ?2 AND (order_id = ?3 OR checkout_id = ?3)
		ORDER BY order_key, provider_product_id`, integrationID, orgID, orderID)
}

func (t *tx) ProviderAddonsBySubscription(ctx context.Context, orgID, integrationID, subscriptionID string) ([]store.ProviderAddon, error) {
	return t.queryAddons(ctx, "subscription", `integration_id = ? AND org_id = ? AND subscription_id = ?
		ORDER BY order_key, provider_product_id`, integrationID, orgID, subscriptionID)
}

func (t *tx) ProviderAddonsByLicence(ctx context.Context, orgID, licenceID string) ([]store.ProviderAddon, error) {
	return t.queryAddons(ctx, "licence", `licence_id = ? AND org_id = ? AND ended_at IS NULL
		ORDER BY integration_id, order_key, provider_product_id`, licenceID, orgID)
}

func (t *tx) UpdateProviderAddon(ctx context.Context, a *store.ProviderAddon) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE provider_addons SET added = ?, ended_at = ?
		WHERE integration_id = ? AND order_key = ? AND provider_product_id = ?`,
		store.EncodeCodes(a.Added), store.MillisPtr(a.EndedAt), a.IntegrationID, a.OrderKey, a.ProviderProductID)
	if err != nil {
		return fmt.Errorf("update provider add-on: %w", err)
	}
	return nil
}

package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

func (t *tx) CreateProviderAddon(ctx context.Context, a *store.ProviderAddon) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO provider_addons (integration_id, order_key, provider_product_id, org_id,
		order_id, checkout_id, subscription_id, licence_id, features, added, ended_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		a.IntegrationID, a.OrderKey, a.ProviderProductID, a.OrgID, a.OrderID, a.CheckoutID, a.SubscriptionID, a.LicenceID,
		store.EncodeCodes(a.Features), store.EncodeCodes(a.Added), msPtr(a.EndedAt))
	if isUnique(err) {
		return licentia.Errorf(licentia.CodeConflict, "The add-on order item is recorded already.")
	}
	if err != nil {
		return fmt.Errorf("create provider add-on: %w", err)
	}
	return nil
}

func (t *tx) ProviderAddonRecorded(ctx context.Context, integrationID, orderKey, providerProductID string) (bool, error) {
	if !isID(integrationID) || !isText(orderKey) || !isText(providerProductID) {
		return false, nil
	}
	var found bool
	err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM provider_addons
		WHERE integration_id = $1 AND order_key = $2 AND provider_product_id = $3)`,
		integrationID, orderKey, providerProductID).Scan(&found)
	if err != nil {
		return false, fmt.Errorf("check provider add-on: %w", err)
	}
	return found, nil
}

const addonColumns = `integration_id, order_key, provider_product_id, org_id, order_id, checkout_id, subscription_id,
	licence_id, features, added, ended_at`

func scanAddon(row pgx.Row) (*store.ProviderAddon, error) {
	var a store.ProviderAddon
	var features, added string
	if err := row.Scan(&a.IntegrationID, &a.OrderKey, &a.ProviderProductID, &a.OrgID, &a.OrderID, &a.CheckoutID,
		&a.SubscriptionID, &a.LicenceID, &features, &added, &a.EndedAt); err != nil {
		return nil, err
	}
	var err error
	if a.Features, err = store.DecodeCodes(features); err != nil {
		return nil, err
	}
	if a.Added, err = store.DecodeCodes(added); err != nil {
		return nil, err
	}
	if a.EndedAt != nil {
		ended := a.EndedAt.UTC()
		a.EndedAt = &ended
	}
	return &a, nil
}

func (t *tx) queryAddons(ctx context.Context, what, query string, args ...any) ([]store.ProviderAddon, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+addonColumns+` FROM provider_addons WHERE `+query, args...)
	if err != nil {
		return nil, fmt.Errorf("read provider add-ons of %s: %w", what, err)
	}
	out, err := collect(rows, scanAddon)
	if err != nil {
		return nil, fmt.Errorf("read provider add-ons of %s: %w", what, err)
	}
	return out, nil
}

func (t *tx) ProviderAddonsByOrder(ctx context.Context, orgID, integrationID, orderID string) ([]store.ProviderAddon, error) {
	if !isID(orgID) || !isID(integrationID) || !isText(orderID) {
		return nil, nil
	}
	return t.queryAddons(ctx, "order", `integration_id = $1 AND org_id = $2 AND (order_id = $3 OR checkout_id = $3)
		ORDER BY order_key, provider_product_id`, integrationID, orgID, orderID)
}

func (t *tx) ProviderAddonsBySubscription(ctx context.Context, orgID, integrationID, subscriptionID string) ([]store.ProviderAddon, error) {
	if !isID(orgID) || !isID(integrationID) || !isText(subscriptionID) {
		return nil, nil
	}
	return t.queryAddons(ctx, "subscription", `integration_id = $1 AND org_id = $2 AND subscription_id = $3
		ORDER BY order_key, provider_product_id`, integrationID, orgID, subscriptionID)
}

func (t *tx) ProviderAddonsByLicence(ctx context.Context, orgID, licenceID string) ([]store.ProviderAddon, error) {
	if !isID(orgID) || !isID(licenceID) {
		return nil, nil
	}
	return t.queryAddons(ctx, "licence", `licence_id = $1 AND org_id = $2 AND ended_at IS NULL
		ORDER BY integration_id, order_key, provider_product_id`, licenceID, orgID)
}

func (t *tx) UpdateProviderAddon(ctx context.Context, a *store.ProviderAddon) error {
	_, err := t.tx.Exec(ctx, `UPDATE provider_addons SET added = $1, ended_at = $2
		WHERE integration_id = $3 AND order_key = $4 AND provider_product_id = $5`,
		store.EncodeCodes(a.Added), msPtr(a.EndedAt), a.IntegrationID, a.OrderKey, a.ProviderProductID)
	if err != nil {
		return fmt.Errorf("update provider add-on: %w", err)
	}
	return nil
}

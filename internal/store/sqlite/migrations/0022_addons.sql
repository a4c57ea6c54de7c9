-- +goose Up
-- A mapping's features (a JSON array of codes), granted to the licences it
-- issues; adds_to, a product id, makes it an add-on: its orders add the
-- features to the buyer's licence of that product instead.
ALTER TABLE integration_mappings ADD COLUMN features TEXT NOT NULL DEFAULT '[]';
ALTER TABLE integration_mappings ADD COLUMN adds_to TEXT;

-- One row for each add-on order item: the unique key makes an order seen
-- twice add nothing more; added is what its refund or its subscription's
-- end removes again, exactly. licence_id is null for an order that added
-- nothing (refunded or ended before it arrived).
CREATE TABLE provider_addons (
    integration_id      TEXT NOT NULL,
    order_key           TEXT NOT NULL,
    provider_product_id TEXT NOT NULL,
    org_id              TEXT NOT NULL,
    order_id            TEXT,
    checkout_id         TEXT,
    subscription_id     TEXT,
    licence_id          TEXT REFERENCES licences (id),
    features            TEXT NOT NULL,
    added               TEXT NOT NULL,
    ended_at            INTEGER,
    PRIMARY KEY (integration_id, order_key, provider_product_id)
);
CREATE INDEX provider_addons_by_order ON provider_addons (integration_id, order_id);
CREATE INDEX provider_addons_by_checkout ON provider_addons (integration_id, checkout_id);
CREATE INDEX provider_addons_by_subscription ON provider_addons (integration_id, subscription_id);
CREATE INDEX provider_addons_by_licence ON provider_addons (licence_id) WHERE ended_at IS NULL;

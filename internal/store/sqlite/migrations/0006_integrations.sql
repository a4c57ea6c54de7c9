-- +goose Up
-- A connected payment-provider account. sealed_api_key and
-- sealed_webhook_secret are sealed under the master key whose fingerprint
-- is master_fingerprint. A disconnected integration keeps its row (its
-- licences name it) with disconnected_at set.
CREATE TABLE integrations (
    id                    TEXT PRIMARY KEY,
    org_id                TEXT NOT NULL REFERENCES organizations (id),
    provider              TEXT NOT NULL,
    name                  TEXT NOT NULL,
    account_id            TEXT NOT NULL,
    livemode              INTEGER NOT NULL,
    sealed_api_key        BLOB NOT NULL,
    sealed_webhook_secret BLOB NOT NULL,
    master_fingerprint    TEXT NOT NULL,
    created_at            INTEGER NOT NULL,
    disconnected_at       INTEGER
);
CREATE INDEX integrations_by_org ON integrations (org_id, created_at, id);

-- product_id names a product without a foreign key: operators may delete
-- products, and a mapping to a deleted one then maps to nothing.
CREATE TABLE integration_mappings (
    integration_id      TEXT NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    provider_product_id TEXT NOT NULL,
    product_id          TEXT NOT NULL,
    limit_kind          TEXT NOT NULL,
    limit_count         INTEGER NOT NULL,
    key_valid_days      INTEGER,
    on_refund           TEXT NOT NULL,
    on_subscription_end TEXT NOT NULL,
    renewal_url         TEXT,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    PRIMARY KEY (integration_id, provider_product_id)
);

-- The provider events already handled, each recorded in the transaction
-- that commits its effects, so a repeated event changes nothing.
CREATE TABLE provider_events (
    integration_id TEXT NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    event_id       TEXT NOT NULL,
    received_at    INTEGER NOT NULL,
    PRIMARY KEY (integration_id, event_id)
);

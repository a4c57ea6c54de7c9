-- +goose Up
-- Mirrors the SQLite engine's 0006_integrations.sql.
--
-- A connected payment-provider account. sealed_api_key and
-- sealed_webhook_secret are sealed under the master key whose fingerprint
-- is master_fingerprint. A disconnected integration keeps its row (its
-- licences name it) with disconnected_at set.
CREATE TABLE integrations (
    id                    uuid PRIMARY KEY,
    org_id                uuid NOT NULL REFERENCES organizations (id),
    provider              text NOT NULL,
    name                  text NOT NULL,
    account_id            text NOT NULL,
    livemode              boolean NOT NULL,
    sealed_api_key        bytea NOT NULL,
    sealed_webhook_secret bytea NOT NULL,
    master_fingerprint    text NOT NULL,
    created_at            timestamptz NOT NULL,
    disconnected_at       timestamptz
);
CREATE INDEX integrations_by_org ON integrations (org_id, created_at, id);

-- product_id names a product without a foreign key: operators may delete
-- products, and a mapping to a deleted one then maps to nothing. COLLATE
-- "C" orders provider product ids byte for byte, as SQLite does.
CREATE TABLE integration_mappings (
    integration_id      uuid NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    provider_product_id text COLLATE "C" NOT NULL,
    product_id          text NOT NULL,
    limit_kind          text NOT NULL,
    limit_count         bigint NOT NULL,
    key_valid_days      bigint,
    on_refund           text NOT NULL,
    on_subscription_end text NOT NULL,
    renewal_url         text,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    PRIMARY KEY (integration_id, provider_product_id)
);

-- The provider events already handled, each recorded in the transaction
-- that commits its effects, so a repeated event changes nothing.
CREATE TABLE provider_events (
    integration_id uuid NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    event_id       text COLLATE "C" NOT NULL,
    received_at    timestamptz NOT NULL,
    PRIMARY KEY (integration_id, event_id)
);

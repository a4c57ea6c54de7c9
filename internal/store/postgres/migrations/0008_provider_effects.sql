-- +goose Up
-- Mirrors the SQLite engine's 0008_provider_effects.sql.
-- renewal_url is where the customer renews, copied from the provider mapping
-- that issued the licence.
ALTER TABLE licences ADD COLUMN renewal_url text;
-- A subscription's end or conversion finds its licences by subscription id.
CREATE INDEX licences_by_provider_subscription ON licences (provider_subscription_id) WHERE provider_subscription_id IS NOT NULL;

-- One row for each licence a provider order issued: the unique key makes an
-- order seen twice issue nothing more, and the mapping's refund and
-- subscription-end actions are kept as they were when the licence was issued.
-- No foreign key to integrations: a disconnected integration keeps its
-- licences.
CREATE TABLE provider_items (
    licence_id          uuid PRIMARY KEY REFERENCES licences (id),
    org_id              uuid NOT NULL,
    integration_id      uuid NOT NULL,
    order_key           text COLLATE "C" NOT NULL,
    provider_product_id text COLLATE "C" NOT NULL,
    on_refund           text NOT NULL,
    on_subscription_end text NOT NULL
);
CREATE UNIQUE INDEX provider_items_by_order ON provider_items (integration_id, order_key, provider_product_id);

-- Refunds, subscription ends and trial conversions seen before the order
-- they concern, applied when its licences are issued. ref is the order id
-- (refunds) or the subscription id.
CREATE TABLE provider_pending_effects (
    integration_id uuid NOT NULL,
    kind           text NOT NULL,
    ref            text COLLATE "C" NOT NULL,
    org_id         uuid NOT NULL,
    happened_at    timestamptz NOT NULL,
    PRIMARY KEY (integration_id, kind, ref)
);

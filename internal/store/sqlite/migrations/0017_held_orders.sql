-- +goose Up
-- Paid orders that could not be issued as they stood, kept until a maker
-- releases (issues) or drops them. One order is held once per integration
-- (order_key: the order id, or the checkout id when there is none), so a
-- provider sending the order again, under any event id, holds nothing
-- more. items is the JSON array of the order's line items as the provider
-- sent them. raw_body is the event's body byte for byte, kept only for an
-- order held for text that is not valid UTF-8 and erased once settled.
CREATE TABLE held_orders (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL,
    integration_id  TEXT NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    provider        TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    order_key       TEXT NOT NULL,
    order_id        TEXT,
    checkout_id     TEXT,
    order_number    TEXT,
    customer_id     TEXT,
    subscription_id TEXT,
    email           TEXT,
    subscription    INTEGER NOT NULL,
    trial_ends_at   INTEGER,
    reason          TEXT NOT NULL,
    items           TEXT NOT NULL,
    raw_body        BLOB,
    status          TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    settled_at      INTEGER,
    UNIQUE (integration_id, order_key)
);
CREATE INDEX held_orders_pending ON held_orders (org_id, created_at, id) WHERE status = 'held';

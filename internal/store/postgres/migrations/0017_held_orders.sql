-- +goose Up
-- Mirrors the SQLite engine's 0017_held_orders.sql.
-- Paid orders that could not be issued as they stood, kept until a maker
-- releases (issues) or drops them. One order is held once per integration
-- (order_key: the order id, or the checkout id when there is none), so a
-- provider sending the order again, under any event id, holds nothing
-- more. items is the JSON array of the order's line items as the provider
-- sent them. raw_body is the event's body byte for byte, kept only for an
-- order held for text that is not valid UTF-8 and erased once settled.
CREATE TABLE held_orders (
    id              uuid PRIMARY KEY,
    org_id          uuid NOT NULL,
    integration_id  uuid NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    provider        text NOT NULL,
    event_id        text NOT NULL,
    order_key       text NOT NULL,
    order_id        text,
    checkout_id     text,
    order_number    text,
    customer_id     text,
    subscription_id text,
    email           text,
    subscription    boolean NOT NULL,
    trial_ends_at   timestamptz,
    reason          text NOT NULL,
    items           text NOT NULL,
    raw_body        bytea,
    status          text NOT NULL,
    created_at      timestamptz NOT NULL,
    settled_at      timestamptz,
    UNIQUE (integration_id, order_key)
);
CREATE INDEX held_orders_pending ON held_orders (org_id, created_at, id) WHERE status = 'held';

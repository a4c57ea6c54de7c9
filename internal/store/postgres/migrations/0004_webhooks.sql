-- +goose Up
-- Mirrors the SQLite engine's 0004_webhooks.sql.
--
-- Event ids are evt_ and 32 hexadecimal characters (events.NewID), not
-- UUIDs, but 0003 typed events.id uuid, so no event the service writes could
-- be stored. 0003 has shipped and is never edited: the column becomes text
-- here. COLLATE "C" compares it byte for byte, as SQLite does.
ALTER TABLE events ALTER COLUMN id TYPE text COLLATE "C" USING id::text;

-- event_types is a space-separated list (store.JoinEventTypes).
CREATE TABLE webhook_endpoints (
    id              uuid PRIMARY KEY,
    org_id          uuid NOT NULL REFERENCES organizations (id),
    url             text NOT NULL,
    event_types     text NOT NULL,
    description     text NOT NULL,
    enabled         boolean NOT NULL,
    disabled_reason text,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_by_org ON webhook_endpoints (org_id, created_at, id);

-- sealed is the secret sealed under the master key whose fingerprint is
-- master_fingerprint. The current secret has no replaced_at, and an
-- endpoint has at most one.
CREATE TABLE webhook_secrets (
    id                 uuid PRIMARY KEY,
    endpoint_id        uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    sealed             bytea NOT NULL,
    master_fingerprint text NOT NULL,
    created_at         timestamptz NOT NULL,
    replaced_at        timestamptz
);
CREATE INDEX webhook_secrets_by_endpoint ON webhook_secrets (endpoint_id, created_at);
CREATE UNIQUE INDEX webhook_secrets_current ON webhook_secrets (endpoint_id) WHERE replaced_at IS NULL;

-- A durable queue: a delivery is claimed for a lease (leased_until) while
-- an attempt runs, so no two processes send one attempt. Deliveries go with
-- their endpoint and with their event.
CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY,
    org_id           uuid NOT NULL,
    endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id         text COLLATE "C" NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    event_type       text NOT NULL,
    status           text NOT NULL,
    attempts         integer NOT NULL,
    last_attempt_at  timestamptz,
    next_attempt_at  timestamptz,
    last_status_code integer,
    failure_reason   text,
    created_at       timestamptz NOT NULL,
    leased_until     timestamptz
);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, created_at, id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
-- Deleting an event (retention) finds its deliveries through this index.
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);

-- +goose Up
-- event_types is a space-separated list.
CREATE TABLE webhook_endpoints (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL REFERENCES organizations (id),
    url             TEXT NOT NULL,
    event_types     TEXT NOT NULL,
    description     TEXT NOT NULL,
    enabled         INTEGER NOT NULL,
    disabled_reason TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_by_org ON webhook_endpoints (org_id, created_at, id);

-- sealed is the secret sealed under the master key whose fingerprint is
-- master_fingerprint. The current secret has no replaced_at, and an
-- endpoint has at most one.
CREATE TABLE webhook_secrets (
    id                 TEXT PRIMARY KEY,
    endpoint_id        TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    sealed             BLOB NOT NULL,
    master_fingerprint TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    replaced_at        INTEGER
);
CREATE INDEX webhook_secrets_by_endpoint ON webhook_secrets (endpoint_id, created_at);
CREATE UNIQUE INDEX webhook_secrets_current ON webhook_secrets (endpoint_id) WHERE replaced_at IS NULL;

-- A durable queue: a delivery is claimed for a lease (leased_until) while
-- an attempt runs, so no two processes send one attempt.
CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    org_id           TEXT NOT NULL,
    endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id         TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    event_type       TEXT NOT NULL,
    status           TEXT NOT NULL,
    attempts         INTEGER NOT NULL,
    last_attempt_at  INTEGER,
    next_attempt_at  INTEGER,
    last_status_code INTEGER,
    failure_reason   TEXT,
    created_at       INTEGER NOT NULL,
    leased_until     INTEGER
);
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, created_at, id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);

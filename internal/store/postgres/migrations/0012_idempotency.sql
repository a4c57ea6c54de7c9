-- +goose Up
-- Mirrors the SQLite engine's 0012_idempotency.sql.
CREATE TABLE idempotency_keys (
    subject      text NOT NULL,
    idem_key     text NOT NULL,
    request_hash bytea NOT NULL,
    token        text NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    lease_until  timestamptz NOT NULL,
    used_at      timestamptz,
    status       integer,
    headers      bytea,
    body         bytea,
    PRIMARY KEY (subject, idem_key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

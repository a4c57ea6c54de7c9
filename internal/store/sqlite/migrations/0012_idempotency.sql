-- +goose Up
-- Idempotency-Key: one row per caller (subject) and key. A row is a claim
-- (no answer yet) held until lease_until; used_at is set in the
-- transaction of the request's change; status, headers and body are the
-- answer replayed until expires_at.
CREATE TABLE idempotency_keys (
    subject      TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    request_hash BLOB NOT NULL,
    token        TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    lease_until  INTEGER NOT NULL,
    used_at      INTEGER,
    status       INTEGER,
    headers      BLOB,
    body         BLOB,
    PRIMARY KEY (subject, idem_key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

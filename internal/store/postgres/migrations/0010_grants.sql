-- +goose Up
-- Mirrors the SQLite engine's 0010_grants.sql.
CREATE TABLE grants (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES organizations (id),
    member_id   uuid NOT NULL,
    client_id   text,
    client_name text NOT NULL,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX grants_by_member ON grants (org_id, member_id, created_at);

CREATE TABLE assistant_tokens (
    token_hash bytea PRIMARY KEY,
    grant_id   uuid NOT NULL REFERENCES grants (id),
    kind       text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL
);
CREATE INDEX assistant_tokens_by_grant ON assistant_tokens (grant_id);

-- +goose Up
-- What an AI assistant acts with: a member's grant, and its opaque tokens,
-- stored hashed (SHA-256). client_id is null for grants made by the
-- operator's command.
CREATE TABLE grants (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    member_id   TEXT NOT NULL,
    client_id   TEXT,
    client_name TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
);
CREATE INDEX grants_by_member ON grants (org_id, member_id, created_at);

CREATE TABLE assistant_tokens (
    token_hash BLOB PRIMARY KEY,
    grant_id   TEXT NOT NULL REFERENCES grants (id),
    kind       TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER,
    created_at INTEGER NOT NULL
);
CREATE INDEX assistant_tokens_by_grant ON assistant_tokens (grant_id);

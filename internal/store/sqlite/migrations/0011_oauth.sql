-- +goose Up
-- The authorization server's state: clients registered by RFC 7591 (all
-- public, so no secret), and authorization codes, stored hashed (SHA-256)
-- and exchanged once. redirect_uris is a space-separated list: a valid URI
-- holds no space.
CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY,
    client_name   TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);

CREATE TABLE authorization_codes (
    code_hash      BLOB PRIMARY KEY,
    client_id      TEXT NOT NULL REFERENCES oauth_clients (id),
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource       TEXT NOT NULL,
    org_id         TEXT NOT NULL REFERENCES organizations (id),
    member_id      TEXT NOT NULL,
    grant_id       TEXT NOT NULL REFERENCES grants (id),
    expires_at     INTEGER NOT NULL,
    used_at        INTEGER,
    created_at     INTEGER NOT NULL
);
CREATE INDEX authorization_codes_by_expiry ON authorization_codes (expires_at);

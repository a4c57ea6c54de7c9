-- +goose Up
-- Mirrors the SQLite engine's 0011_oauth.sql.
CREATE TABLE oauth_clients (
    id            text PRIMARY KEY,
    client_name   text NOT NULL,
    redirect_uris text NOT NULL,
    created_at    timestamptz NOT NULL
);

CREATE TABLE authorization_codes (
    code_hash      bytea PRIMARY KEY,
    client_id      text NOT NULL REFERENCES oauth_clients (id),
    redirect_uri   text NOT NULL,
    code_challenge text NOT NULL,
    resource       text NOT NULL,
    org_id         uuid NOT NULL REFERENCES organizations (id),
    member_id      uuid NOT NULL,
    grant_id       uuid NOT NULL REFERENCES grants (id),
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz,
    created_at     timestamptz NOT NULL
);
CREATE INDEX authorization_codes_by_expiry ON authorization_codes (expires_at);

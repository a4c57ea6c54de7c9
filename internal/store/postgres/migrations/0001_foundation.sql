-- +goose Up
-- Mirrors the SQLite engine's 0001_foundation.sql. Times are timestamptz,
-- written at millisecond precision in UTC, as SQLite keeps them.
CREATE TABLE settings (
    name  text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE organizations (
    id         uuid PRIMARY KEY,
    name       text NOT NULL,
    slug       text NOT NULL UNIQUE,
    plan       text NOT NULL,
    created_at timestamptz NOT NULL
);

CREATE TABLE members (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES organizations (id),
    email      text NOT NULL,
    role       text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX members_by_org ON members (org_id, created_at, id);
-- COLLATE "C" makes lower() fold ASCII letters only, as SQLite's lower()
-- does, so both engines refuse exactly the same addresses as duplicates.
CREATE UNIQUE INDEX members_email ON members (org_id, lower(email COLLATE "C"));

CREATE TABLE invitations (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES organizations (id),
    email       text NOT NULL,
    role        text NOT NULL,
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL,
    accepted_at timestamptz,
    revoked_at  timestamptz
);
CREATE INDEX invitations_by_org ON invitations (org_id, created_at, id);

CREATE TABLE api_keys (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES organizations (id),
    name       text NOT NULL,
    prefix     text NOT NULL UNIQUE,
    hash       bytea NOT NULL,
    scopes     text NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL
);
CREATE INDEX api_keys_by_org ON api_keys (org_id, created_at, id);

-- seq orders entries written in the same millisecond. data is text, not
-- jsonb: jsonb would reorder keys and drop whitespace, and entries must read
-- back byte for byte as written. actor_id is text because not every actor
-- type is sure to have a UUID.
CREATE TABLE audit_log (
    seq        bigserial PRIMARY KEY,
    id         uuid NOT NULL UNIQUE,
    org_id     uuid NOT NULL REFERENCES organizations (id),
    licence_id uuid,
    action     text NOT NULL,
    actor_type text NOT NULL,
    actor_id   text,
    at         timestamptz NOT NULL,
    data       text NOT NULL
);
CREATE INDEX audit_log_by_org ON audit_log (org_id, seq);
CREATE INDEX audit_log_by_licence ON audit_log (licence_id, seq) WHERE licence_id IS NOT NULL;

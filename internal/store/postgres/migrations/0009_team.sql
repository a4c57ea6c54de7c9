-- +goose Up
-- Mirrors the SQLite engine's 0009_team.sql.
CREATE TABLE accounts (
    id            uuid PRIMARY KEY,
    email         text NOT NULL,
    password_hash text,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX accounts_email ON accounts (lower(email COLLATE "C"));
CREATE INDEX members_by_email ON members (lower(email COLLATE "C"));

ALTER TABLE invitations ADD COLUMN token_hash bytea;
ALTER TABLE invitations ADD COLUMN invited_by uuid;
CREATE UNIQUE INDEX invitations_by_token ON invitations (token_hash) WHERE token_hash IS NOT NULL;
CREATE INDEX invitations_by_org_email ON invitations (org_id, lower(email COLLATE "C"), created_at);

CREATE TABLE login_links (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES organizations (id),
    member_id  uuid NOT NULL,
    token_hash bytea NOT NULL UNIQUE,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL
);

CREATE TABLE sessions (
    id           uuid PRIMARY KEY,
    token_hash   bytea NOT NULL UNIQUE,
    account_id   uuid NOT NULL REFERENCES accounts (id),
    org_id       uuid NOT NULL,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_by_account ON sessions (account_id);
CREATE INDEX sessions_by_last_seen ON sessions (last_seen_at);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

-- +goose Up
-- A person who signs in to the console. Members of several organizations
-- with one address share one account: membership is by address, compared
-- as members_email compares it. password_hash is an argon2id PHC string,
-- null until a setup or invitation link sets it.
CREATE TABLE accounts (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL,
    password_hash TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE UNIQUE INDEX accounts_email ON accounts (lower(email));
-- Signing in lists an address's memberships in every organization;
-- members_email leads with org_id, so it cannot find them.
CREATE INDEX members_by_email ON members (lower(email));

-- An invitation's link token, stored hashed (SHA-256); null on invitations
-- written before links existed, which no link can accept. invited_by is the
-- member who sent it.
ALTER TABLE invitations ADD COLUMN token_hash BLOB;
ALTER TABLE invitations ADD COLUMN invited_by TEXT;
CREATE UNIQUE INDEX invitations_by_token ON invitations (token_hash) WHERE token_hash IS NOT NULL;
-- The invitation limits count an organization's invitations of the last
-- 24 hours, and those to one address.
CREATE INDEX invitations_by_org_email ON invitations (org_id, lower(email), created_at);

-- One-time links that set a member's password: org create's setup_url and
-- member login-link.
CREATE TABLE login_links (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES organizations (id),
    member_id  TEXT NOT NULL,
    token_hash BLOB NOT NULL UNIQUE,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER,
    created_at INTEGER NOT NULL
);

-- Console sessions. org_id is the organization the session looks at; a
-- member of several switches it.
CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    token_hash   BLOB NOT NULL UNIQUE,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    org_id       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX sessions_by_account ON sessions (account_id);
CREATE INDEX sessions_by_last_seen ON sessions (last_seen_at);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);

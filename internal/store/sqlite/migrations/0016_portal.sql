-- +goose Up
-- The customer portal. A sign-in link is mailed to a customer: the row keeps
-- its token's hash, never the token, and the address it was asked for in
-- lower case. The mail that carries it has the link's id. A link signs in
-- once (used_at) before it expires.
CREATE TABLE portal_links (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL,
    token_hash BLOB NOT NULL UNIQUE,
    email      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX portal_links_by_expiry ON portal_links (expires_at);

-- Portal sessions: a customer signed in to one organization as one
-- address (lower case); the cookie holds the token, the row its hash.
CREATE TABLE portal_sessions (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL,
    token_hash BLOB NOT NULL UNIQUE,
    email      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX portal_sessions_by_expiry ON portal_sessions (expires_at);


-- +goose Up
-- Times are INTEGER milliseconds since the Unix epoch, UTC.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE organizations (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    slug       TEXT NOT NULL UNIQUE,
    plan       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE members (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES organizations (id),
    email      TEXT NOT NULL,
    role       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX members_by_org ON members (org_id, created_at, id);
CREATE UNIQUE INDEX members_email ON members (org_id, lower(email));

CREATE TABLE invitations (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    email       TEXT NOT NULL,
    role        TEXT NOT NULL,
    expires_at  INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    accepted_at INTEGER,
    revoked_at  INTEGER
);
CREATE INDEX invitations_by_org ON invitations (org_id, created_at, id);

CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES organizations (id),
    name       TEXT NOT NULL,
    prefix     TEXT NOT NULL UNIQUE,
    hash       BLOB NOT NULL,
    scopes     TEXT NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER,
    created_at INTEGER NOT NULL
);
CREATE INDEX api_keys_by_org ON api_keys (org_id, created_at, id);

-- seq orders entries written in the same millisecond.
CREATE TABLE audit_log (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    org_id     TEXT NOT NULL REFERENCES organizations (id),
    licence_id TEXT,
    action     TEXT NOT NULL,
    actor_type TEXT NOT NULL,
    actor_id   TEXT,
    at         INTEGER NOT NULL,
    data       TEXT NOT NULL
);
CREATE INDEX audit_log_by_org ON audit_log (org_id, seq);
CREATE INDEX audit_log_by_licence ON audit_log (licence_id, seq) WHERE licence_id IS NOT NULL;

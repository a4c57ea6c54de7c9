-- +goose Up
-- Branding: what customers see of an organization. Null display_name
-- shows the organization's name.
ALTER TABLE organizations ADD COLUMN display_name TEXT;
ALTER TABLE organizations ADD COLUMN support_email TEXT;
ALTER TABLE organizations ADD COLUMN logo_url TEXT;
ALTER TABLE organizations ADD COLUMN accent TEXT;

-- A paid order mails the buyer their keys unless its mapping says not to;
-- mappings made before this migration do.
ALTER TABLE integration_mappings ADD COLUMN send_key_mail INTEGER NOT NULL DEFAULT 1;

-- Mail to customers, a durable queue like webhook_deliveries: a row is
-- written in the transaction of the change that causes it and claimed for
-- a lease (leased_until) while an attempt runs. A row holds references,
-- never an address or a licence key: both are read when the mail is sent.
CREATE TABLE mails (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL,
    kind            TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL,
    last_attempt_at INTEGER,
    next_attempt_at INTEGER,
    failure_reason  TEXT,
    created_at      INTEGER NOT NULL,
    leased_until    INTEGER
);
CREATE INDEX mails_due ON mails (next_attempt_at, id) WHERE status = 'queued';

-- The licences a mail lists, in its order (position). The key-mail limit
-- counts a licence's mails through mail_licences_by_licence.
CREATE TABLE mail_licences (
    mail_id    TEXT NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    org_id     TEXT NOT NULL,
    licence_id TEXT NOT NULL,
    kind       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (mail_id, position)
);
CREATE INDEX mail_licences_by_licence ON mail_licences (licence_id, kind, created_at);

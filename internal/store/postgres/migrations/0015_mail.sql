-- +goose Up
-- Mirrors the SQLite engine's 0014_mail.sql.
--
-- Branding: what customers see of an organization. Null display_name
-- shows the organization's name.
ALTER TABLE organizations ADD COLUMN display_name text;
ALTER TABLE organizations ADD COLUMN support_email text;
ALTER TABLE organizations ADD COLUMN logo_url text;
ALTER TABLE organizations ADD COLUMN accent text;

-- A paid order mails the buyer their keys unless its mapping says not to;
-- mappings made before this migration do.
ALTER TABLE integration_mappings ADD COLUMN send_key_mail boolean NOT NULL DEFAULT true;

-- Mail to customers, a durable queue like webhook_deliveries: a row is
-- written in the transaction of the change that causes it and claimed for
-- a lease (leased_until) while an attempt runs. A row holds references,
-- never an address or a licence key: both are read when the mail is sent.
CREATE TABLE mails (
    id              uuid PRIMARY KEY,
    org_id          uuid NOT NULL,
    kind            text NOT NULL,
    status          text NOT NULL,
    attempts        integer NOT NULL,
    last_attempt_at timestamptz,
    next_attempt_at timestamptz,
    failure_reason  text,
    created_at      timestamptz NOT NULL,
    leased_until    timestamptz
);
CREATE INDEX mails_due ON mails (next_attempt_at, id) WHERE status = 'queued';

-- The licences a mail lists, in its order (position). The key-mail limit
-- counts a licence's mails through mail_licences_by_licence.
CREATE TABLE mail_licences (
    mail_id    uuid NOT NULL REFERENCES mails (id) ON DELETE CASCADE,
    position   integer NOT NULL,
    org_id     uuid NOT NULL,
    licence_id uuid NOT NULL,
    kind       text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (mail_id, position)
);
CREATE INDEX mail_licences_by_licence ON mail_licences (licence_id, kind, created_at);

-- +goose Up
-- Licence ids are global. email_search is the lower-cased email, for
-- case-insensitive matches and prefix range scans. live_activations is kept
-- in the same transaction as every activation change.
CREATE TABLE licences (
    id                       TEXT PRIMARY KEY,
    org_id                   TEXT NOT NULL REFERENCES organizations (id),
    product_id               TEXT NOT NULL REFERENCES products (id),
    email                    TEXT NOT NULL,
    email_search             TEXT NOT NULL,
    issued_at                INTEGER NOT NULL,
    expires_at               INTEGER,
    limit_kind               TEXT NOT NULL,
    limit_count              INTEGER NOT NULL,
    major                    INTEGER NOT NULL,
    status                   TEXT NOT NULL,
    status_reason            TEXT,
    status_changed_at        INTEGER,
    trial_ends_at            INTEGER,
    source                   TEXT NOT NULL,
    integration_id           TEXT,
    external_ref             TEXT,
    provider_order_id        TEXT,
    provider_subscription_id TEXT,
    provider_customer_id     TEXT,
    provider_checkout_id     TEXT,
    subscription_ended_at    INTEGER,
    anonymised_at            INTEGER,
    created_at               INTEGER NOT NULL,
    updated_at               INTEGER NOT NULL,
    live_activations         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX licences_by_email ON licences (org_id, email_search, issued_at, id);
CREATE INDEX licences_by_issue ON licences (org_id, issued_at, id);
CREATE UNIQUE INDEX licences_external_ref ON licences (product_id, external_ref) WHERE external_ref IS NOT NULL;
CREATE INDEX licences_by_org_external_ref ON licences (org_id, external_ref) WHERE external_ref IS NOT NULL;
CREATE INDEX licences_active_expiry ON licences (org_id, expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;
CREATE INDEX licences_sweep ON licences (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;
CREATE INDEX licences_revoked ON licences (org_id, status_changed_at) WHERE status = 'revoked';
CREATE INDEX licences_subscription_ended ON licences (org_id, subscription_ended_at) WHERE subscription_ended_at IS NOT NULL;

-- Counters of licences by what counts need (store.StatsKey), so neither
-- plan checks nor counts scan an organization's licences.
CREATE TABLE licence_stats (
    org_id     TEXT NOT NULL,
    product_id TEXT NOT NULL,
    status     TEXT NOT NULL,
    source     TEXT NOT NULL,
    term       TEXT NOT NULL,
    trial      INTEGER NOT NULL,
    lapsed     INTEGER NOT NULL,
    shard      INTEGER NOT NULL,
    n          INTEGER NOT NULL,
    live       INTEGER NOT NULL,
    PRIMARY KEY (org_id, product_id, status, source, term, trial, lapsed, shard)
);

CREATE TABLE activations (
    id             TEXT PRIMARY KEY,
    org_id         TEXT NOT NULL,
    licence_id     TEXT NOT NULL REFERENCES licences (id),
    machine_id     TEXT NOT NULL,
    label          TEXT NOT NULL,
    os             TEXT NOT NULL,
    app_version    TEXT NOT NULL,
    activated_at   INTEGER NOT NULL,
    last_seen_at   INTEGER NOT NULL,
    deactivated_at INTEGER
);
CREATE INDEX activations_by_licence ON activations (licence_id, activated_at, id);
-- One live activation per machine and licence.
CREATE UNIQUE INDEX activations_live_machine ON activations (licence_id, machine_id) WHERE deactivated_at IS NULL;

-- Events, with the exact body bytes every webhook attempt sends.
CREATE TABLE events (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL,
    type       TEXT NOT NULL,
    licence_id TEXT,
    at         INTEGER NOT NULL,
    body       TEXT NOT NULL
);
CREATE INDEX events_by_time ON events (at);
CREATE INDEX events_by_licence ON events (licence_id, at);

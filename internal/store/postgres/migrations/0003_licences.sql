-- +goose Up
-- Mirrors the SQLite engine's 0003_licences.sql. Licence ids are global.
-- email_search is the email lower-cased in Go, for case-insensitive matches
-- and prefix range scans; COLLATE "C" compares it byte for byte, as SQLite
-- does, so a range [prefix, bound) holds exactly the addresses starting with
-- prefix. live_activations is kept in the same transaction as every
-- activation change.
CREATE TABLE licences (
    id                       uuid PRIMARY KEY,
    org_id                   uuid NOT NULL REFERENCES organizations (id),
    product_id               text COLLATE "C" NOT NULL REFERENCES products (id),
    email                    text NOT NULL,
    email_search             text COLLATE "C" NOT NULL,
    issued_at                timestamptz NOT NULL,
    expires_at               timestamptz,
    limit_kind               text NOT NULL,
    limit_count              bigint NOT NULL,
    major                    bigint NOT NULL,
    status                   text NOT NULL,
    status_reason            text,
    status_changed_at        timestamptz,
    trial_ends_at            timestamptz,
    source                   text NOT NULL,
    integration_id           uuid,
    external_ref             text COLLATE "C",
    provider_order_id        text,
    provider_subscription_id text,
    provider_customer_id     text,
    provider_checkout_id     text,
    subscription_ended_at    timestamptz,
    anonymised_at            timestamptz,
    created_at               timestamptz NOT NULL,
    updated_at               timestamptz NOT NULL,
    live_activations         bigint NOT NULL DEFAULT 0
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
    org_id     uuid NOT NULL,
    product_id text COLLATE "C" NOT NULL,
    status     text NOT NULL,
    source     text NOT NULL,
    term       text NOT NULL,
    trial      boolean NOT NULL,
    lapsed     boolean NOT NULL,
    shard      integer NOT NULL,
    n          bigint NOT NULL,
    live       bigint NOT NULL,
    PRIMARY KEY (org_id, product_id, status, source, term, trial, lapsed, shard)
);

CREATE TABLE activations (
    id             uuid PRIMARY KEY,
    org_id         uuid NOT NULL,
    licence_id     uuid NOT NULL REFERENCES licences (id),
    machine_id     text COLLATE "C" NOT NULL,
    label          text NOT NULL,
    os             text NOT NULL,
    app_version    text NOT NULL,
    activated_at   timestamptz NOT NULL,
    last_seen_at   timestamptz NOT NULL,
    deactivated_at timestamptz
);
CREATE INDEX activations_by_licence ON activations (licence_id, activated_at, id);
-- One live activation per machine and licence.
CREATE UNIQUE INDEX activations_live_machine ON activations (licence_id, machine_id) WHERE deactivated_at IS NULL;

-- Events, with the exact body bytes every webhook attempt sends: text, not
-- jsonb, which would reorder keys. seq orders events of the same
-- millisecond as written, as SQLite's rowid does.
CREATE TABLE events (
    seq        bigserial PRIMARY KEY,
    id         uuid NOT NULL UNIQUE,
    org_id     uuid NOT NULL,
    type       text NOT NULL,
    licence_id uuid,
    at         timestamptz NOT NULL,
    body       text NOT NULL
);
CREATE INDEX events_by_time ON events (at);
CREATE INDEX events_by_licence ON events (licence_id, at);

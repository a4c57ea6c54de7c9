-- +goose Up
-- Machines that change. An activation's components: a JSON object of
-- component names to the hashes the application sent ('{}' when it sent
-- none, as every activation made before this migration did).
ALTER TABLE activations ADD COLUMN components text NOT NULL DEFAULT '{}';

-- A product's rule for rebinding a live activation to a new machine id
-- by its components, and how many transfers each of its licences may make
-- in 30 days (0: none). A licence's own transfers_per_30_days, null when it
-- follows its product's.
ALTER TABLE products ADD COLUMN machine_match text NOT NULL DEFAULT 'exact';
ALTER TABLE products ADD COLUMN transfers_per_30_days bigint NOT NULL DEFAULT 0;
ALTER TABLE licences ADD COLUMN transfers_per_30_days bigint;

-- Transfers made: a live activation freed for a new machine on a full
-- licence. Counted by licence over the last 30 days, so the limit holds in
-- any rolling 30 days; rows stay, as the audit log does.
CREATE TABLE activation_transfers (
    id            uuid PRIMARY KEY,
    org_id        uuid NOT NULL,
    licence_id    uuid NOT NULL REFERENCES licences (id),
    activation_id uuid NOT NULL REFERENCES activations (id),
    at            timestamptz NOT NULL
);
CREATE INDEX activation_transfers_by_licence ON activation_transfers (licence_id, at);

-- +goose Up
-- Mirrors the SQLite engine's 0014_reissue.sql.
-- provider_order_number is the order's number as the buyer's receipt shows
-- it (Lemon Squeezy's order number, Paddle's invoice number); purchase
-- lookup matches it as it matches the order id, through its own index.
ALTER TABLE licences ADD COLUMN provider_order_number text;
CREATE INDEX licences_by_provider_order_number ON licences (provider_order_number) WHERE provider_order_number IS NOT NULL;

-- A reissued key: the new licence names the one it replaces, and the old
-- one, revoked, names its replacement. Both keep the sale's external_ref,
-- so the reference is unique among the licences not replaced: the one in
-- use, never the revoked ones it took over from.
ALTER TABLE licences ADD COLUMN replaces uuid;
ALTER TABLE licences ADD COLUMN replaced_by uuid;
DROP INDEX licences_external_ref;
CREATE UNIQUE INDEX licences_external_ref ON licences (product_id, external_ref)
    WHERE external_ref IS NOT NULL AND replaced_by IS NULL;

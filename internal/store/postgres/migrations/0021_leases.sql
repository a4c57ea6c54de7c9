-- +goose Up
-- Floating use. A product's limit of machines in use at once per licence
-- (null: no count), how long a lease lasts without a renewal, and the
-- longest borrowed lease in hours (0: borrowing off). A licence's own
-- max_concurrent, null when it follows its product's.
ALTER TABLE products ADD COLUMN max_concurrent bigint;
ALTER TABLE products ADD COLUMN lease_ttl_seconds bigint NOT NULL DEFAULT 900;
ALTER TABLE products ADD COLUMN max_borrow_hours bigint NOT NULL DEFAULT 0;
ALTER TABLE licences ADD COLUMN max_concurrent bigint;

-- Leases: one per activation at most. A lease holds a place while it has
-- not ended and its activation is live; the others are swept.
CREATE TABLE floating_leases (
    id            uuid PRIMARY KEY,
    org_id        uuid NOT NULL,
    licence_id    uuid NOT NULL REFERENCES licences (id),
    activation_id uuid NOT NULL UNIQUE REFERENCES activations (id),
    taken_at      timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL
);
CREATE INDEX floating_leases_by_licence ON floating_leases (licence_id, expires_at);
CREATE INDEX floating_leases_by_end ON floating_leases (expires_at);

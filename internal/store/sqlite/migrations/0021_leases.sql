-- +goose Up
-- Floating use. A product's limit of machines in use at once per licence
-- (null: no count), how long a lease lasts without a renewal, and the
-- longest borrowed lease in hours (0: borrowing off). A licence's own
-- max_concurrent, null when it follows its product's.
ALTER TABLE products ADD COLUMN max_concurrent INTEGER;
ALTER TABLE products ADD COLUMN lease_ttl_seconds INTEGER NOT NULL DEFAULT 900;
ALTER TABLE products ADD COLUMN max_borrow_hours INTEGER NOT NULL DEFAULT 0;
ALTER TABLE licences ADD COLUMN max_concurrent INTEGER;

-- Leases: one per activation at most. A lease holds a place while it has
-- not ended and its activation is live; the others are swept.
CREATE TABLE floating_leases (
    id            TEXT PRIMARY KEY,
    org_id        TEXT NOT NULL,
    licence_id    TEXT NOT NULL REFERENCES licences (id),
    activation_id TEXT NOT NULL UNIQUE REFERENCES activations (id),
    taken_at      INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
);
CREATE INDEX floating_leases_by_licence ON floating_leases (licence_id, expires_at);
CREATE INDEX floating_leases_by_end ON floating_leases (expires_at);

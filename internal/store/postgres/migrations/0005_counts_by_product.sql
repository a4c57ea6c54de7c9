-- +goose Up
-- Mirrors the SQLite engine's 0005_counts_by_product.sql. The counts of one
-- product count licences issued, and revoked, since a time; without the
-- product in an index each licence of the organization in the window is
-- read from the table to test its product. The build holds writes to
-- licences for a few seconds a million licences, once, at the upgrade.
CREATE INDEX licences_by_product_issue ON licences (org_id, product_id, issued_at);
CREATE INDEX licences_product_revoked ON licences (org_id, product_id, status_changed_at) WHERE status = 'revoked';

-- +goose Up
-- The counts of one product (GET /v1/admin/licences/counts?product_id=)
-- count licences issued, and revoked, since a time. licences_by_issue and
-- licences_revoked hold no product, so those counts read every licence of
-- the organization in the window from the table to test its product: about
-- 30,000 for the default week at a million licences. These indexes answer
-- them from the index alone, as the organization's counts are.
CREATE INDEX licences_by_product_issue ON licences (org_id, product_id, issued_at);
CREATE INDEX licences_product_revoked ON licences (org_id, product_id, status_changed_at) WHERE status = 'revoked';

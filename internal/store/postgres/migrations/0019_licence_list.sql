-- +goose Up
-- Mirrors the SQLite engine's 0019_licence_list.sql.
-- The licence list (GET /v1/admin/licences/list and its export) pages by
-- keyset, newest first: (issued_at, id) descending. The organization's list
-- walks licences_by_issue; a product's list walks this index, which ends
-- with id so a page of one product reads its rows in the list's order with
-- no sort. licences_by_product_issue stays: the heartbeat sweep and the
-- counts name it in their plans.
CREATE INDEX licences_by_product_list ON licences (org_id, product_id, issued_at, id);

-- A machine's licences (the list's machine_id filter), live activations or
-- past ones.
CREATE INDEX activations_by_machine ON activations (org_id, machine_id);

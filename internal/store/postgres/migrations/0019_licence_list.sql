-- +goose Up
-- Mirrors the SQLite engine's 0019_licence_list.sql.
-- The licence list (GET /v1/admin/licences/list and its export) pages by
-- keyset, newest first: (issued_at, id) descending. The organization's list
-- walks licences_by_issue; a product's list walks this index, which ends
-- with id so a page of one product reads its rows in the list's order with
-- no sort. It replaces licences_by_product_issue (0005), its prefix: the
-- product counts and the heartbeat sweep read this one as they read that.
CREATE INDEX licences_by_product_list ON licences (org_id, product_id, issued_at, id);
DROP INDEX licences_by_product_issue;

-- A machine's licences (the list's machine_id filter), live activations or
-- past ones.
CREATE INDEX activations_by_machine ON activations (org_id, machine_id);

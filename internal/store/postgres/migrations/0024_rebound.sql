-- +goose Up
-- When a live activation was last rebound to a new machine id by its
-- components (null: never). A rebinding leaves the activation alone for a
-- few seconds, so of requests racing to rebind it exactly one does, even
-- when a late racer's whole request runs after the first committed.
ALTER TABLE activations ADD COLUMN rebound_at timestamptz;


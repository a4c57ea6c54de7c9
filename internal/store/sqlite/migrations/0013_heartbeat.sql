-- +goose Up
-- Heartbeat leases: a product's interval in seconds, null when its
-- activations hold their seats until freed. The sweeper reaches the live
-- activations of those products through their licences (by
-- licences_by_product_issue, of 0005), without reading any other
-- product's.
ALTER TABLE products ADD COLUMN heartbeat_interval_seconds INTEGER;
CREATE INDEX products_heartbeat ON products (id) WHERE heartbeat_interval_seconds IS NOT NULL;
CREATE INDEX activations_live_seen ON activations (licence_id, last_seen_at) WHERE deactivated_at IS NULL;

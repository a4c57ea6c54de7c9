-- +goose Up
-- Mirrors the SQLite engine's 0023_console_history.sql.
ALTER TABLE provider_events ADD COLUMN event_type text NOT NULL DEFAULT '';
ALTER TABLE provider_events ADD COLUMN outcome text NOT NULL DEFAULT '';
ALTER TABLE provider_events ADD COLUMN order_id text COLLATE "C";
ALTER TABLE provider_events ADD COLUMN subscription_id text COLLATE "C";
CREATE INDEX provider_events_by_received ON provider_events (integration_id, received_at);

ALTER TABLE webhook_deliveries ADD COLUMN last_response text;

ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
ALTER TABLE grants ADD COLUMN last_used_at timestamptz;

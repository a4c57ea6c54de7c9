-- +goose Up
-- What the console shows of what happened, beside what the service needs.

-- A provider event's name, what it did (licentia.ProviderEventOutcome) and
-- the order or subscription it named, written in the transaction that
-- applies it. Events recorded before this migration read as unknown.
ALTER TABLE provider_events ADD COLUMN event_type TEXT NOT NULL DEFAULT '';
ALTER TABLE provider_events ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
ALTER TABLE provider_events ADD COLUMN order_id TEXT;
ALTER TABLE provider_events ADD COLUMN subscription_id TEXT;
CREATE INDEX provider_events_by_received ON provider_events (integration_id, received_at);

-- The receiver's answer to a delivery's last attempt: its first 2 KB,
-- cut at a character boundary.
ALTER TABLE webhook_deliveries ADD COLUMN last_response TEXT;

-- When a key or grant was last used, written at most once a minute.
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
ALTER TABLE grants ADD COLUMN last_used_at INTEGER;

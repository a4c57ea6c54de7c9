-- +goose Up
-- A customer's purchase lookup finds an order's licences by the provider's
-- order id or checkout id, across organizations. Without these indexes it
-- would read every licence of every organization. Only provider licences
-- carry the ids, so the indexes hold those rows alone.
CREATE INDEX licences_by_provider_order ON licences (provider_order_id) WHERE provider_order_id IS NOT NULL;
CREATE INDEX licences_by_provider_checkout ON licences (provider_checkout_id) WHERE provider_checkout_id IS NOT NULL;

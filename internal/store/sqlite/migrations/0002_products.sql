-- +goose Up
-- Product ids and key prefixes are global. Key prefixes are stored upper
-- case, so UNIQUE holds them unique regardless of case.
CREATE TABLE products (
    id                     TEXT PRIMARY KEY,
    org_id                 TEXT NOT NULL REFERENCES organizations (id),
    name                   TEXT NOT NULL,
    key_prefix             TEXT NOT NULL UNIQUE,
    current_major          INTEGER NOT NULL,
    machines_per_seat      INTEGER NOT NULL,
    licence_signing_domain TEXT NOT NULL,
    verdict_signing_domain TEXT NOT NULL,
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL
);
CREATE INDEX products_by_org ON products (org_id, created_at, id);

-- Every product id and key prefix ever used, so none is reused even after
-- its product is gone.
CREATE TABLE product_names (
    field TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (field, value)
);

-- sealed is the private key sealed under the master key whose fingerprint
-- is master_fingerprint.
CREATE TABLE product_keys (
    id                 TEXT PRIMARY KEY,
    product_id         TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    public_key         BLOB NOT NULL,
    fingerprint        TEXT NOT NULL,
    sealed             BLOB NOT NULL,
    master_fingerprint TEXT NOT NULL,
    status             TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    retired_at         INTEGER
);
CREATE INDEX product_keys_by_product ON product_keys (product_id, created_at, id);

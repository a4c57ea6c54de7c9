-- +goose Up
-- Mirrors the SQLite engine's 0002_products.sql. Product ids and key
-- prefixes are global and not UUIDs, so they are text. COLLATE "C" compares
-- and orders them byte for byte, as SQLite does, whatever the database's
-- collation: both engines list products with equal created_at in the same
-- order. Key prefixes are stored upper case, so UNIQUE holds them unique
-- regardless of case.
CREATE TABLE products (
    id                     text COLLATE "C" PRIMARY KEY,
    org_id                 uuid NOT NULL REFERENCES organizations (id),
    name                   text NOT NULL,
    key_prefix             text COLLATE "C" NOT NULL UNIQUE,
    current_major          bigint NOT NULL,
    machines_per_seat      bigint NOT NULL,
    licence_signing_domain text NOT NULL,
    verdict_signing_domain text NOT NULL,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);
CREATE INDEX products_by_org ON products (org_id, created_at, id);

-- Every product id and key prefix ever used, so none is reused even after
-- its product is gone.
CREATE TABLE product_names (
    field text COLLATE "C" NOT NULL,
    value text COLLATE "C" NOT NULL,
    PRIMARY KEY (field, value)
);

-- sealed is the private key sealed under the master key whose fingerprint
-- is master_fingerprint.
CREATE TABLE product_keys (
    id                 uuid PRIMARY KEY,
    product_id         text COLLATE "C" NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    public_key         bytea NOT NULL,
    fingerprint        text NOT NULL,
    sealed             bytea NOT NULL,
    master_fingerprint text NOT NULL,
    status             text NOT NULL,
    created_at         timestamptz NOT NULL,
    retired_at         timestamptz
);
CREATE INDEX product_keys_by_product ON product_keys (product_id, created_at, id);

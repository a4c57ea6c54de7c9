-- +goose Up
-- Mirrors the SQLite engine's 0018_features.sql.
-- A product's features, the entitlements its licences may grant. A code is
-- unique within its product; at most 200 a product, held by the engine.
CREATE TABLE product_features (
    product_id text COLLATE "C" NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    code       text COLLATE "C" NOT NULL,
    org_id     uuid NOT NULL,
    name       text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (product_id, code)
);

-- A licence's grants. The licence row keeps them too, as the JSON its
-- answers and verdicts show (features), so a licence is read in one row;
-- this table is what the database checks them with: a grant names a
-- feature of the catalogue (so a feature granted by any licence cannot be
-- deleted, and a deleted one cannot be granted: the foreign key's row locks
-- decide a race between the two), and the feature filter finds licences
-- through it.
CREATE TABLE licence_features (
    licence_id uuid NOT NULL REFERENCES licences (id),
    code       text COLLATE "C" NOT NULL,
    org_id     uuid NOT NULL,
    product_id text COLLATE "C" NOT NULL,
    expires_at timestamptz,
    PRIMARY KEY (licence_id, code),
    FOREIGN KEY (product_id, code) REFERENCES product_features (product_id, code)
);
CREATE INDEX licence_features_by_feature ON licence_features (product_id, code);
CREATE INDEX licence_features_by_org_code ON licence_features (org_id, code, licence_id);

ALTER TABLE licences ADD COLUMN features text NOT NULL DEFAULT '[]';

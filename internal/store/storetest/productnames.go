package storetest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// wantNameUse checks ProductNameUse for each value, in and out of a
// transaction.
func wantNameUse(t *testing.T, s store.Store, want map[store.ProductField]map[string]store.NameUse) {
	t.Helper()
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for field, values := range want {
			for value, use := range values {
				if got, err := r.ProductNameUse(t.Context(), field, value); got != use || err != nil {
					t.Errorf("ProductNameUse(%s, %q) = %v, %v, want %v, nil", field, value, got, err, use)
				}
			}
		}
	})
}

// deleteProduct removes a product in its own transaction.
func deleteProduct(t *testing.T, s store.Store, p *licentia.Product) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error { return tx.DeleteProduct(t.Context(), p.OrgID, p.ID) })
}

func testProductNameUse(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	mine, theirs, gone := newProduct(o.ID, "mine", "MINE"), newProduct(other.ID, "theirs", "THEIRS"), newProduct(o.ID, "gone", "GONE")
	createProducts(t, s, mine, theirs, gone)
	deleteProduct(t, s, gone)

	// A value held now is taken whichever organization holds it; one held
	// only by a deleted product was used before. Ids and prefixes are apart:
	// an id's value is not a prefix in use, nor the other way round.
	wantNameUse(t, s, map[store.ProductField]map[string]store.NameUse{
		store.FieldID: {
			"mine": store.NameTaken, "theirs": store.NameTaken, "gone": store.NameUsedBefore,
			"free": store.NameFree, "MINE": store.NameFree, "GONE": store.NameFree,
		},
		store.FieldKeyPrefix: {
			"MINE": store.NameTaken, "THEIRS": store.NameTaken, "GONE": store.NameUsedBefore,
			"FREE": store.NameFree, "mine": store.NameFree, "gone": store.NameFree,
		},
	})
}

// testProductConflicts creates a product whose id or prefix another product
// holds, in the same organization or another: conflict, and nothing stays.
func testProductConflicts(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	taken := newProduct(o.ID, "taken", "TAKEN")
	createProducts(t, s, taken)
	for _, tt := range []struct {
		name    string
		product *licentia.Product
	}{
		{"id", newProduct(o.ID, taken.ID, "FRESH")},
		{"id in another organization", newProduct(other.ID, taken.ID, "FRESH")},
		{"key prefix", newProduct(o.ID, "fresh", taken.KeyPrefix)},
		{"key prefix in another organization", newProduct(other.ID, "fresh", taken.KeyPrefix)},
		{"both", newProduct(other.ID, taken.ID, taken.KeyPrefix)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantCode(t, "CreateProduct()", createProduct(t, s, tt.product), licentia.CodeConflict)
		})
	}
	got, err := s.Products(ctx, o.ID)
	if diff := cmp.Diff([]licentia.Product{*taken}, got); diff != "" || err != nil {
		t.Errorf("Products() after conflicts error = %v, mismatch (-want +got):\n%s", err, diff)
	}
	if got, err := s.Products(ctx, other.ID); len(got) != 0 || err != nil {
		t.Errorf("Products(other) after conflicts = %+v, %v, want none", got, err)
	}
	wantNameUse(t, s, map[store.ProductField]map[string]store.NameUse{
		store.FieldID:        {"fresh": store.NameFree},
		store.FieldKeyPrefix: {"FRESH": store.NameFree},
	})
}

// testProductNeverReused deletes a product: its id and prefix are never
// chosen again, by any organization.
func testProductNeverReused(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	gone := newProduct(o.ID, "gone", "GONE")
	createProducts(t, s, gone)
	deleteProduct(t, s, gone)
	wantNameUse(t, s, map[store.ProductField]map[string]store.NameUse{
		store.FieldID:        {"gone": store.NameUsedBefore},
		store.FieldKeyPrefix: {"GONE": store.NameUsedBefore},
	})

	// When both were used, the id is the one named.
	for _, tt := range []struct {
		name    string
		product *licentia.Product
		field   string
	}{
		{"id", newProduct(o.ID, gone.ID, "FRESH"), "id"},
		{"id in another organization", newProduct(other.ID, gone.ID, "FRESH"), "id"},
		{"key prefix", newProduct(o.ID, "fresh", gone.KeyPrefix), "key_prefix"},
		{"key prefix in another organization", newProduct(other.ID, "fresh", gone.KeyPrefix), "key_prefix"},
		{"both", newProduct(other.ID, gone.ID, gone.KeyPrefix), "id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := createProduct(t, s, tt.product)
			wantCode(t, "CreateProduct()", err, licentia.CodeProductReserved)
			if e, ok := errors.AsType[*licentia.Error](err); !ok || e.Details["field"] != tt.field {
				t.Errorf("CreateProduct() error = %#v, want details.field %q", err, tt.field)
			}
		})
	}
	for _, o := range []*licentia.Organization{o, other} {
		if got, err := s.Products(t.Context(), o.ID); len(got) != 0 || err != nil {
			t.Errorf("Products(%s) = %+v, %v, want none", o.Slug, got, err)
		}
	}
	wantNameUse(t, s, map[store.ProductField]map[string]store.NameUse{
		store.FieldID:        {"gone": store.NameUsedBefore, "fresh": store.NameFree},
		store.FieldKeyPrefix: {"GONE": store.NameUsedBefore, "FRESH": store.NameFree},
	})
}

package signing_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"testing"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

// catalogueSize is how many products the catalogue benchmarks hold.
const catalogueSize = 1000

func BenchmarkOpenProductKey(b *testing.B) {
	m := newMasterKey(b, 1)
	k := newProductKey(b, m, "photo-editor")
	for b.Loop() {
		if _, err := signing.OpenProductKey(m, k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSeal(b *testing.B) {
	m := newMasterKey(b, 1)
	seed := make([]byte, 32)
	aad := []byte("licentia/signing-key/v1\x00photo-editor\x00" + licentia.NewID())
	for b.Loop() {
		m.Seal(seed, aad)
	}
}

// keyPrefix returns a distinct key prefix for each i below 8^4: "P" and four
// of the digits 2-9, which every prefix may use.
func keyPrefix(i int) string {
	b := []byte("P0000")
	for j := 4; j > 0; j-- {
		b[j] = byte('2' + i%8)
		i /= 8
	}
	return string(b)
}

// benchCatalogue stores catalogueSize products in a SQLite store under one
// organization and returns the store and one of the products with the
// private part of its key.
func benchCatalogue(b *testing.B) (store.Store, *licentia.Product, ed25519.PrivateKey) {
	b.Helper()
	st, err := sqlite.Open(b.Context(), storetest.SQLiteFile(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	m := newMasterKey(b, 1)
	org := &licentia.Organization{ID: licentia.NewID(), Name: "Acme", Slug: "acme", Plan: licentia.PlanBusiness, CreatedAt: base}
	products := make([]*licentia.Product, catalogueSize)
	for i := range products {
		id := fmt.Sprintf("product-%d", i)
		products[i] = productWith(id, keyPrefix(i), newProductKey(b, m, id))
		products[i].OrgID = org.ID
	}
	err = st.InTx(b.Context(), func(tx store.Tx) error {
		if err := tx.CreateOrganization(b.Context(), org); err != nil {
			return err
		}
		for _, p := range products {
			if err := tx.CreateProduct(b.Context(), p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	p := products[catalogueSize/2]
	return st, p, openProductKey(b, m, p.CurrentKey())
}

func BenchmarkCatalogueVerifyLicenceKey(b *testing.B) {
	st, p, priv := benchCatalogue(b)
	c := signing.NewCatalogue(st, clock.System{}, slog.New(slog.DiscardHandler))
	if err := c.Refresh(b.Context()); err != nil {
		b.Fatal(err)
	}
	key := licenceKey(b, p, priv, licentia.NewID())
	for b.Loop() {
		if _, _, err := c.VerifyLicenceKey(context.Background(), key); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCatalogueRefresh(b *testing.B) {
	st, _, _ := benchCatalogue(b)
	c := signing.NewCatalogue(st, clock.System{}, slog.New(slog.DiscardHandler))
	for b.Loop() {
		if err := c.Refresh(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

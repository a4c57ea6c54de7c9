package main

import (
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store/storetest"
)

var benchLicences = flag.Int("bench-licences", 100_000, "licences BenchmarkCountLicences loads (3 activations each)")

// BenchmarkCountLicences measures the counts of GET /v1/admin/licences/counts,
// through the store, of the organization and of the product holding a
// loaded data set, since seven days before the load (the route's default).
// Loading takes a while: about 10 s for the default 100,000 licences on
// each engine, and the benchmark runs once per engine whatever -benchtime.
//
//	go test ./tools/dataload -run '^$' -bench CountLicences -bench-licences 1000000
func BenchmarkCountLicences(b *testing.B) {
	engines := []struct {
		name string
		url  func(b *testing.B) string
	}{
		{"sqlite", func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "licentia.db") }},
		{"postgres", func(b *testing.B) string { return storetest.PostgresURL(b) }},
	}
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			url := e.url(b)
			st := openTestStore(b, url)
			org, p := createFixture(b, st)
			o := options{databaseURL: url, org: org.Slug, product: p.ID, licences: *benchLicences,
				activations: 3 * *benchLicences, seed: 1, batch: 50_000, plans: licentia.DefaultPlans()}
			if _, err := load(b.Context(), o, clock.NewFake(base), io.Discard); err != nil {
				b.Fatalf("load() error = %v", err)
			}
			since := base.Add(-7 * day)
			for _, scope := range []struct {
				name      string
				productID *string
			}{{"organization", nil}, {"product", &p.ID}} {
				b.Run(scope.name, func(b *testing.B) {
					for b.Loop() {
						if _, err := st.CountLicences(b.Context(), org.ID, scope.productID, since, base); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

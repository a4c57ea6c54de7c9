package main

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
)

// loaded loads n licences (3 activations each) on an engine and returns
// the store, the organization and an admin service over them.
func loaded(b testing.TB, url string, n int) (store.Store, *licentia.Organization, *licentia.Product, *admin.Service) {
	b.Helper()
	st := openTestStore(b, url)
	org, p := createFixture(b, st)
	o := options{databaseURL: url, org: org.Slug, product: p.ID, licences: n, activations: 3 * n, seed: 1, batch: 50_000,
		plans: licentia.DefaultPlans()}
	if _, err := load(b.Context(), o, clock.NewFake(base), io.Discard); err != nil {
		b.Fatalf("load() error = %v", err)
	}
	svc := admin.New(admin.Options{Store: st, Clock: clock.NewFake(base), Plans: licentia.DefaultPlans(),
		Keys: signing.NewKeyring(nil), Logger: slog.New(slog.DiscardHandler)})
	return st, org, p, svc
}

// BenchmarkListLicences measures a list page of 50 (GET
// /v1/admin/licences/list, through the operation and the store) on a loaded
// data set, and reports its 99th percentile: the first page, a page deep
// in the list (through a cursor), and pages filtered by product, by state
// and by an issue window. Loading takes about 10 s for the default 100,000
// licences on each engine.
//
//	go test ./tools/dataload -run '^$' -bench ListLicences -benchtime 500x -bench-licences 1000000
func BenchmarkListLicences(b *testing.B) {
	for _, e := range benchEngines {
		b.Run(e.name, func(b *testing.B) {
			_, org, p, svc := loaded(b, e.url(b), *benchLicences)
			deep := middleCursor(b, svc, org.ID)
			active, trial := licentia.StateActive, licentia.StateTrial
			after := base.Add(-90 * day)
			for _, tt := range []struct {
				name string
				q    admin.ListQuery
			}{
				{"first", admin.ListQuery{}},
				{"deep", admin.ListQuery{Cursor: &deep}},
				{"product", admin.ListQuery{LicenceFilters: admin.LicenceFilters{FindQuery: admin.FindQuery{ProductID: &p.ID}}}},
				{"active", admin.ListQuery{LicenceFilters: admin.LicenceFilters{FindQuery: admin.FindQuery{State: &active}}}},
				{"trial", admin.ListQuery{LicenceFilters: admin.LicenceFilters{FindQuery: admin.FindQuery{State: &trial}}}},
				{"window", admin.ListQuery{LicenceFilters: admin.LicenceFilters{IssuedBefore: &after}}},
			} {
				b.Run(tt.name, func(b *testing.B) {
					var took []time.Duration
					for b.Loop() {
						t0 := time.Now()
						page, err := svc.ListLicences(b.Context(), org.ID, tt.q)
						took = append(took, time.Since(t0))
						if err != nil || len(page.Licences) != admin.DefaultListLimit {
							b.Fatalf("ListLicences(%s) = %v, want a full page", tt.name, err)
						}
					}
					slices.Sort(took)
					b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
				})
			}
		})
	}
}

// middleCursor pages to about the middle of the organization's list with
// pages of 200 and returns the cursor there.
func middleCursor(b testing.TB, svc *admin.Service, orgID string) string {
	b.Helper()
	limit := int64(200)
	var cursor *string
	for range *benchLicences / 2 / 200 {
		page, err := svc.ListLicences(b.Context(), orgID, admin.ListQuery{Limit: &limit, Cursor: cursor})
		if err != nil || page.Next == nil {
			b.Fatalf("ListLicences() = %v", err)
		}
		cursor = page.Next
	}
	return *cursor
}

// BenchmarkExportLicences exports every loaded licence as CSV, a page at a
// time, and reports rows a second, bytes allocated a row and the most heap
// in use while it ran: the last stays flat however many rows.
//
//	go test ./tools/dataload -run '^$' -bench ExportLicences -benchtime 1x -bench-licences 1000000
func BenchmarkExportLicences(b *testing.B) {
	for _, e := range benchEngines {
		b.Run(e.name, func(b *testing.B) {
			_, org, _, svc := loaded(b, e.url(b), *benchLicences)
			for b.Loop() {
				m := exportOnce(b, svc, org.ID)
				b.ReportMetric(float64(m.rows)/m.took.Seconds(), "rows/s")
				b.ReportMetric(float64(m.allocated)/float64(m.rows), "B/row")
				b.ReportMetric(float64(m.peakHeap)/(1<<20), "peak-heap-MiB")
			}
		})
	}
}

type exportRun struct {
	rows                int
	took                time.Duration
	allocated, peakHeap uint64
}

// lineCounter counts the lines written to it.
type lineCounter struct{ n int }

func (c *lineCounter) Write(b []byte) (int, error) {
	for _, x := range b {
		if x == '\n' {
			c.n++
		}
	}
	return len(b), nil
}

// exportOnce exports every licence of orgID to a line counter, sampling
// the heap in use before each page.
func exportOnce(b testing.TB, svc *admin.Service, orgID string) exportRun {
	b.Helper()
	ex, err := svc.ExportLicences(b.Context(), orgID, admin.LicenceFilters{})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	startAlloc, startHeap := ms.TotalAlloc, ms.HeapInuse
	var peak uint64
	var w lineCounter
	t0 := time.Now()
	err = ex.WriteCSV(&w, func() (context.Context, context.CancelFunc, error) {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse-min(ms.HeapInuse, startHeap))
		ctx, cancel := context.WithTimeout(b.Context(), 10*time.Second)
		return ctx, cancel, nil
	})
	took := time.Since(t0)
	if err != nil {
		b.Fatal(err)
	}
	runtime.ReadMemStats(&ms)
	return exportRun{rows: w.n - 1, took: took, allocated: ms.TotalAlloc - startAlloc, peakHeap: peak}
}

var benchEngines = []struct {
	name string
	url  func(b testing.TB) string
}{
	{"sqlite", func(b testing.TB) string { return "sqlite:" + b.TempDir() + "/licentia.db" }},
	{"postgres", func(b testing.TB) string { return storetest.PostgresURL(b) }},
}

// TestExportMemoryFlat holds the export to constant memory: exporting
// 100,000 licences takes no more heap, and allocates no more a row, than
// exporting 10,000 (within what the garbage collector's timing moves).
// Under the race detector the step is 4,000 to 40,000, loaded in minutes
// instead of a quarter of an hour: an export that kept its rows would
// still hold over 8 MiB more at 40,000.
func TestExportMemoryFlat(t *testing.T) {
	sizes := []int{10_000, 100_000}
	if raceEnabled {
		sizes = []int{4_000, 40_000}
	}
	runs := map[int]exportRun{}
	for _, n := range sizes {
		_, org, _, svc := loaded(t, "sqlite:"+t.TempDir()+"/licentia.db", n)
		runs[n] = exportOnce(t, svc, org.ID)
		if runs[n].rows != n {
			t.Fatalf("export of %d licences = %d rows", n, runs[n].rows)
		}
	}
	small, big := runs[sizes[0]], runs[sizes[1]]
	perRow := func(r exportRun) float64 { return float64(r.allocated) / float64(r.rows) }
	t.Logf("%d rows: %.0f B/row, peak %d KiB; %d rows: %.0f B/row, peak %d KiB", sizes[0], perRow(small), small.peakHeap>>10, sizes[1], perRow(big), big.peakHeap>>10)
	if perRow(big) > 1.25*perRow(small) {
		t.Errorf("allocations a row grew from %.0f B at %d rows to %.0f B at %d, want flat", perRow(small), sizes[0], perRow(big), sizes[1])
	}
	if big.peakHeap > small.peakHeap+8<<20 {
		t.Errorf("peak heap grew from %d KiB at %d rows to %d KiB at %d, want flat", small.peakHeap>>10, sizes[0], big.peakHeap>>10, sizes[1])
	}
}

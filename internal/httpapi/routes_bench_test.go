package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkRoutes measures, on each engine, the two routes a fleet calls
// most: a status check of a machine holding a seat (the clock stands
// still, so its verdict is the one kept from the last check, as a check
// within a second of the last one is), alone and sixteen at once, and a
// new seat, a new machine each
// time on a licence of the highest limit. Set LICENTIA_TEST_POSTGRES_URL
// for the PostgreSQL half; BENCHMARKS.md compares runs with benchstat.
func BenchmarkRoutes(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			e, key := newDeskEnv(b, envOptions{limiter: allowAll{}, postgres: engine == "postgres"})
			serve(b, e, "/v1/activations", mustJSON(b, activateBody(key, "bench-machine", nil)), http.StatusCreated)
			status := mustJSON(b, map[string]any{"licence_key": key, "machine_id": "bench-machine"})
			b.Run("status", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					serve(b, e, "/v1/activations/status", status, http.StatusOK)
				}
			})
			// Sixteen callers at once, as a fleet's checks arrive: on
			// PostgreSQL, the reads that wait for a slot go out together.
			b.Run("status-parallel", func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						req := httptest.NewRequestWithContext(b.Context(), http.MethodPost, "/v1/activations/status", bytes.NewReader(status))
						req.Header.Set("Content-Type", "application/json")
						w := httptest.NewRecorder()
						e.api.ServeHTTP(w, req)
						if w.Code != http.StatusOK {
							b.Errorf("status check = %d, want 200; body %s", w.Code, w.Body)
							return
						}
					}
				})
			})
			i := 0 // across runs of the sub-benchmark: every machine is new
			b.Run("new-seat", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					i++
					body := fmt.Appendf(nil, `{"licence_key":%q,"machine_id":"seat-%d","label":"Laptop","os":"linux","app_version":"3.1.0"}`, key, i)
					serve(b, e, "/v1/activations", body, http.StatusCreated)
				}
			})
		})
	}
}

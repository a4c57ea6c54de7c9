package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// BenchmarkLeases measures, on each engine in one run, a status check
// beside the three lease routes of a machine holding a seat: taking a new
// lease (the licence locked, its leases counted, one row written), renewing
// it (one statement, no lock) and releasing it (one statement). Take and
// release alternate, each timed alone. Set LICENTIA_TEST_POSTGRES_URL for
// the PostgreSQL half.
func BenchmarkLeases(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			e, key := newDeskEnv(b, envOptions{limiter: allowAll{}, postgres: engine == "postgres"})
			serve(b, e, "/v1/activations", mustJSON(b, activateBody(key, "bench-machine", nil)), http.StatusCreated)
			seat := mustJSON(b, map[string]any{"licence_key": key, "machine_id": "bench-machine"})
			take := func() string {
				w := serveAnswer(b, e, "/v1/leases", seat, http.StatusCreated)
				var ans leaseView
				if err := json.Unmarshal(w, &ans); err != nil {
					b.Fatal(err)
				}
				return ans.Lease.ID
			}
			ref := func(id string) []byte {
				return mustJSON(b, map[string]any{"licence_key": key, "machine_id": "bench-machine", "lease_id": id})
			}
			// Status checks and renewals each come a second after the last,
			// as a fleet's do: no verdict is reused (the one-second rule),
			// each is signed anew, and a status check rewrites last_seen_at
			// every 30 to 60 of them.
			tick := func() { e.clock.Advance(time.Second + time.Millisecond) }
			b.Run("status", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					tick()
					serve(b, e, "/v1/activations/status", seat, http.StatusOK)
				}
			})
			b.Run("renew", func(b *testing.B) {
				body := ref(take())
				b.ReportAllocs()
				for b.Loop() {
					tick()
					serve(b, e, "/v1/leases/renew", body, http.StatusOK)
				}
				serve(b, e, "/v1/leases/release", body, http.StatusOK)
			})
			b.Run("take", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					id := take()
					b.StopTimer()
					serve(b, e, "/v1/leases/release", ref(id), http.StatusOK)
					b.StartTimer()
				}
			})
			b.Run("release", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					body := ref(take())
					b.StartTimer()
					serve(b, e, "/v1/leases/release", body, http.StatusOK)
				}
			})
		})
	}
}

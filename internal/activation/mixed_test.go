package activation_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// logBuffer lets concurrent loggers share one buffer.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// mixedLicence is a licence the mixed load issued, with its key.
type mixedLicence struct{ id, key string }

// mixedPool is the licences issued so far, shared by the clients.
type mixedPool struct {
	mu       sync.Mutex
	licences []mixedLicence
}

func (p *mixedPool) add(l mixedLicence) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.licences = append(p.licences, l)
}

func (p *mixedPool) pick(rng *rand.Rand) (mixedLicence, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.licences) == 0 {
		return mixedLicence{}, false
	}
	return p.licences[rng.IntN(len(p.licences))], true
}

// expected reports whether err is an answer the contract gives this mix of
// operations; anything else (a deadlock surfacing as internal_error above
// all) fails the test.
func expected(err error) bool {
	switch licentia.ErrorCode(err) {
	case licentia.CodeSeatLimitReached, licentia.CodeLicenceRevoked, licentia.CodeLicenceExpired:
		return true
	}
	return err == nil
}

// TestMixedWritesInOneOrganization: 16 clients issuing, activating,
// revoking, reinstating and deactivating in one organization at once, with
// a webhook endpoint (so every event queues a delivery) and a sweeper moving
// expired licences, answer only the contract's errors, never an internal
// one: every transaction takes its locks in one order, so on PostgreSQL none
// deadlocks, and none needs running again. Afterwards the counters agree
// with the rows.
func TestMixedWritesInOneOrganization(t *testing.T) {
	const (
		clients   = 16
		perClient = 60
		budget    = 4 * time.Second
	)
	// Transactions PostgreSQL ended as deadlock victims would be run again
	// and succeed; the log says whether any was.
	var retried logBuffer
	openPostgres := func(t *testing.T) store.Store {
		db, err := postgres.Open(t.Context(), storetest.PostgresURL(t))
		if err != nil {
			t.Fatalf("postgres.Open() error = %v", err)
		}
		t.Cleanup(func() { db.Close() })
		db.SetLogger(slog.New(slog.NewTextHandler(&retried, nil)))
		return db
	}
	for _, eng := range []struct {
		name string
		open func(t *testing.T) store.Store
	}{{"sqlite", storetest.OpenSQLite}, {"postgres", openPostgres}} {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			ctx := t.Context()
			hooks := admin.New(admin.Options{Store: f.st, Clock: f.clock, Plans: licentia.DefaultPlans(), Keys: f.keys,
				BaseURL: "https://licentia.example", Logger: slog.New(slog.DiscardHandler)})
			_, _, err := hooks.AddWebhookEndpoint(ctx, licentia.OperatorActor, f.org.ID, admin.CreateWebhookEndpoint{
				URL: ptr("https://hooks.example.com/licentia"), EventTypes: licentia.EventTypes})
			if err != nil {
				t.Fatalf("AddWebhookEndpoint() error = %v", err)
			}
			var pool mixedPool
			// An issue with an expiry reads the clock and is validated against
			// it; the sweeper must not move the clock in between, or the
			// expiry can be past when checked.
			var clockMu sync.RWMutex
			op := func(rng *rand.Rand, client int) (string, error) {
				l, ok := pool.pick(rng)
				n := rng.IntN(10)
				if !ok {
					n = 0
				}
				actor, machineID := licentia.OperatorActor, fmt.Sprintf("machine-%d", rng.IntN(3))
				switch {
				case n < 3:
					kind, count := licentia.LimitMachines, int64(2)
					in := admin.NewLicence{ProductID: ptr("desk-app"), Email: ptr(fmt.Sprintf("client%d@example.com", client)),
						LimitKind: &kind, LimitCount: &count}
					clockMu.RLock()
					if rng.IntN(2) == 0 {
						// Some expire while the load runs, for the sweeper.
						at := f.clock.Now().Add(time.Duration(1+rng.IntN(20)) * time.Minute)
						in.ExpiresAt = &at
					}
					v, err := f.admin.IssueLicence(ctx, actor, f.org.ID, in)
					clockMu.RUnlock()
					if err == nil {
						pool.add(mixedLicence{v.Licence.ID, *v.Key})
					}
					return "issue", err
				case n < 6:
					_, err := f.svc.Activate(ctx, activate(l.key, machine(machineID)))
					return "activate", err
				case n < 7:
					_, err := f.admin.RevokeLicence(ctx, actor, f.org.ID, l.id, admin.Reason("refund"))
					return "revoke", err
				case n < 8:
					_, err := f.admin.ReinstateLicence(ctx, actor, f.org.ID, l.id, admin.Reason("paid"))
					return "reinstate", err
				default:
					_, err := f.svc.Deactivate(ctx, seat(l.key, machineID))
					return "deactivate", err
				}
			}

			// The budget bounds the run on a slow machine; the count bounds
			// it on a fast one. Nothing is asserted about time.
			deadline := time.Now().Add(budget)
			var wg sync.WaitGroup
			var mu sync.Mutex
			done, failed := map[string]int{}, map[string]int{}
			for c := range clients {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(c), 7))
					for i := 0; i < perClient && time.Now().Before(deadline); i++ {
						name, err := op(rng, c)
						mu.Lock()
						done[name]++
						if !expected(err) {
							if failed[name]++; failed[name] <= 3 {
								t.Errorf("%s: error = %v", name, err)
							}
						}
						mu.Unlock()
					}
				})
			}
			wg.Go(func() {
				for time.Now().Before(deadline) {
					clockMu.Lock()
					f.clock.Advance(time.Minute)
					clockMu.Unlock()
					if _, err := f.admin.SweepLicences(ctx); err != nil {
						t.Errorf("SweepLicences() error = %v", err)
						return
					}
				}
			})
			wg.Wait()
			t.Logf("operations %v, unexpected errors %v", done, failed)
			if done["issue"] == 0 || done["activate"] == 0 {
				t.Fatalf("operations %v: the mix issued or activated nothing", done)
			}
			checkCounters(t, f)
			if n := strings.Count(retried.String(), "transaction retried"); n > 0 {
				t.Errorf("%d transactions deadlocked and were run again, want none:\n%s", n, retried.String())
			}
		})
	}
}

// checkCounters compares the organization's counts with those computed
// from every licence and activation row, and each licence's live count with
// its live activation rows.
func checkCounters(t *testing.T, f *fixture) {
	t.Helper()
	ctx, now := t.Context(), f.clock.Now()
	ls, err := f.st.FindLicences(ctx, f.org.ID, store.LicenceFilter{Limit: 1 << 20}, now)
	if err != nil {
		t.Fatalf("FindLicences() error = %v", err)
	}
	all, live := make([]*licentia.Licence, len(ls)), map[string]int64{}
	for i := range ls {
		all[i] = &ls[i]
		acts, err := f.st.Activations(ctx, f.org.ID, ls[i].ID)
		if err != nil {
			t.Fatalf("Activations() error = %v", err)
		}
		for _, a := range acts {
			if a.DeactivatedAt == nil {
				live[ls[i].ID]++
			}
		}
		if ls[i].LiveActivations != live[ls[i].ID] {
			t.Errorf("licence %s: live_activations %d, live activation rows %d", ls[i].ID, ls[i].LiveActivations, live[ls[i].ID])
		}
	}
	got, err := f.st.CountLicences(ctx, f.org.ID, nil, start, now)
	if err != nil {
		t.Fatalf("CountLicences() error = %v", err)
	}
	if diff := cmp.Diff(storetest.BruteCounts(all, live, f.org.ID, nil, start, now), *got); diff != "" {
		t.Errorf("counts mismatch (-rows +counters):\n%s", diff)
	}
}

package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

var errDatabaseDown = errors.New("the database system is starting up")

// outageAfterClaim is a store whose database fails right after an
// Idempotency-Key is claimed, as when PostgreSQL restarts or the disk
// fills: the request's change and the key's release both fail, until the
// test brings the database back. Each transaction tried while it is down
// is counted.
type outageAfterClaim struct {
	store.Store
	armed, down *atomic.Bool
	tried       *atomic.Int64
}

func newOutageAfterClaim() outageAfterClaim {
	return outageAfterClaim{armed: &atomic.Bool{}, down: &atomic.Bool{}, tried: &atomic.Int64{}}
}

func (s outageAfterClaim) wrap(st store.Store) store.Store {
	s.Store = st
	return s
}

func (s outageAfterClaim) InTx(ctx context.Context, fn func(store.Tx) error) error {
	if s.down.Load() {
		s.tried.Add(1)
		return errDatabaseDown
	}
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(claimTx{tx, s}) })
}

type claimTx struct {
	store.Tx
	s outageAfterClaim
}

func (t claimTx) ClaimIdempotencyKey(ctx context.Context, k *store.IdempotencyKey, now time.Time) (*store.IdempotencyKey, bool, error) {
	held, claimed, err := t.Tx.ClaimIdempotencyKey(ctx, k, now)
	if err == nil && claimed && t.s.armed.CompareAndSwap(true, false) {
		t.s.down.Store(true)
	}
	return held, claimed, err
}

// TestIdempotencyKeyFreedAfterOutage: a key claimed just before the
// database failed, by a request that wrote nothing and answered 500, is
// freed once the database is back: at once for a retry reaching the same
// server, by the background step (backing off while the database is
// down) for a retry reaching another, and by its lease at the latest, when
// the step lets it go. No retry is refused 409 idempotency_key_in_use once
// the key is freed, and nothing is written twice. On SQLite and
// PostgreSQL.
func TestIdempotencyKeyFreedAfterOutage(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			outage := newOutageAfterClaim()
			e := licenceEnvOf(t, newTestEnvWith(t, envOptions{postgres: engine == "postgres", wrapStore: outage.wrap}))
			other := newTestEnvWith(t, envOptions{shareStore: e.testEnv, masterKey: e.master})
			body := issueBody(nil)
			fail := func(key string) {
				t.Helper()
				outage.armed.Store(true)
				if r := e.send(t, withKey(issueCall(e.allKey, body), key)); r.status != http.StatusInternalServerError {
					t.Fatalf("issue as the database fails = %d %s, want 500", r.status, r.body)
				}
			}
			fresh := func(env *testEnv, key string) {
				t.Helper()
				r := env.send(t, withKey(issueCall(e.allKey, body), key))
				if r.status != http.StatusCreated || r.header.Get("Idempotent-Replayed") != "" {
					t.Errorf("retry of %s once the database is back = %d %s (replayed %q), want a fresh 201",
						key, r.status, r.body, r.header.Get("Idempotent-Replayed"))
				}
			}
			inUse := func(env *testEnv, key string) {
				t.Helper()
				r := env.send(t, withKey(issueCall(e.allKey, body), key))
				if r.status != http.StatusConflict || r.apiError(t).Code != licentia.CodeIdempotencyKeyInUse {
					t.Errorf("retry of %s before its release = %d %s, want 409 idempotency_key_in_use", key, r.status, r.body)
				}
			}

			// A retry reaching the server that took the claim frees it first.
			fail("same-server")
			outage.down.Store(false)
			fresh(e.testEnv, "same-server")

			// step runs the background step once and counts the transactions
			// it tried while the database was down.
			step := func() (int64, error) {
				before := outage.tried.Load()
				err := e.api.SettleIdempotencyKeys(t.Context())
				return outage.tried.Load() - before, err
			}

			// A retry reaching another server waits for the background step,
			// which tries again after 1 s, then 2 s, while the database is down.
			fail("other-server")
			if n, err := step(); n != 0 || err != nil {
				t.Errorf("step before a second passed: %d tries, %v; want none", n, err)
			}
			e.clock.Advance(time.Second)
			if n, err := step(); n != 1 || !errors.Is(err, errDatabaseDown) {
				t.Errorf("step while the database is down: %d tries, %v; want 1 and %v", n, err, errDatabaseDown)
			}
			outage.down.Store(false)
			e.clock.Advance(time.Second)
			if _, err := step(); err != nil {
				t.Errorf("step before the next try is due: %v", err)
			}
			inUse(other, "other-server")
			e.clock.Advance(time.Second)
			if _, err := step(); err != nil {
				t.Errorf("step with the database back: %v", err)
			}
			fresh(other, "other-server")

			// A database down past the claim's lease: the step lets the claim
			// go without trying again, and the lease frees the key.
			fail("long-outage")
			e.clock.Advance(2 * time.Minute)
			if n, err := step(); n != 0 || err != nil {
				t.Errorf("step past the lease: %d tries, %v; want none", n, err)
			}
			outage.down.Store(false)
			fresh(other, "long-outage")

			if n := e.licenceCount(t, e.org.ID); n != 3 {
				t.Errorf("%d licences, want 3: one per key", n)
			}
			if n := len(e.events(t, e.org.ID)); n != 3 {
				t.Errorf("%d events, want 3", n)
			}
		})
	}
}

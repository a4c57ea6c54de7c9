package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

var errKeysUnreadable = errors.New("database is locked")

// unreadableKeys is a store whose key lookups fail while down is set, as
// during a database outage.
type unreadableKeys struct {
	store.Store
	down *atomic.Bool
}

func (s unreadableKeys) APIKeyByPrefix(ctx context.Context, prefix string) (*licentia.APIKey, error) {
	if s.down.Load() {
		return nil, errKeysUnreadable
	}
	return s.Store.APIKeyByPrefix(ctx, prefix)
}

// TestKeyUnreadable: when the store fails while identifying the caller, an
// administration request answers 500 internal_error, never 429, and counts
// against no rate limit: neither the key's nor the client address's, which
// every key behind that address would otherwise share.
func TestKeyUnreadable(t *testing.T) {
	down := &atomic.Bool{}
	e := newTestEnvWith(t, envOptions{wrapStore: func(s store.Store) store.Store { return unreadableKeys{s, down} }})
	key := e.key(t, e.org.ID, licentia.ScopeOrganizationRead)
	org := call{method: "GET", path: "/v1/admin/organization", key: key}
	other := call{method: "GET", path: "/v1/admin/organization", key: e.key(t, e.org.ID, licentia.ScopeOrganizationRead)}

	down.Store(true)
	for _, c := range []call{org, org, other} {
		r := e.run(t, scenario{call: c, wantStatus: http.StatusInternalServerError, wantCode: licentia.CodeInternal,
			notWant: []string{errKeysUnreadable.Error()}})
		if got := r.header.Get("X-RateLimit-Remaining-admin"); got != "" {
			t.Errorf("X-RateLimit-Remaining-admin = %q on a failed identification, want none (nothing counted)", got)
		}
		if logs := e.logs.String(); !strings.Contains(logs, r.header.Get("X-Request-Id")) || !strings.Contains(logs, errKeysUnreadable.Error()) {
			t.Errorf("no log line with the cause and the request id")
		}
	}
	// 300 more, the whole admin limit: none of them is refused 429.
	e.repeat(t, 300, org, http.StatusInternalServerError)

	down.Store(false)
	wantRateHeaders(t, e.run(t, scenario{call: org, wantStatus: http.StatusOK}), "299", "60")
	wantRateHeaders(t, e.run(t, scenario{call: other, wantStatus: http.StatusOK}), "299", "60")
	noKey := call{method: "GET", path: "/v1/admin/organization", invalid: true}
	wantRateHeaders(t, e.run(t, scenario{call: noKey, wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized}), "299", "60")
}

// TestDeadlineWhileWriterBusy: on SQLite, a request waiting for the one
// writer longer than the database timeout answers 500 internal_error
// instead of waiting as long as the writer is held; product creation, where
// the contract names a dependency that is down, answers 503
// service_unavailable. Nothing is written.
func TestDeadlineWhileWriterBusy(t *testing.T) {
	e := newTestEnvWith(t, envOptions{databaseTimeout: 300 * time.Millisecond})
	key := e.key(t, e.org.ID, licentia.ScopeLicencesWrite, licentia.ScopeProductsWrite)

	held, release := make(chan struct{}), make(chan struct{})
	// Released at the latest when the test ends, so the store can close.
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce)
	done := make(chan error, 1)
	go func() {
		done <- e.store.InTx(context.WithoutCancel(t.Context()), func(store.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	for _, tt := range []struct {
		call     call
		status   int
		wantCode licentia.Code
	}{
		{call{method: "POST", path: "/v1/admin/licences/" + licentia.NewID() + "/revoke", key: key, body: map[string]any{"reason": "refund"}},
			http.StatusInternalServerError, licentia.CodeInternal},
		{call{method: "POST", path: "/v1/admin/products", key: key, body: productBody("late-app", "LATE", nil)},
			http.StatusServiceUnavailable, licentia.CodeServiceUnavailable},
	} {
		r := e.sendGuarded(t, tt.call)
		if r.status != tt.status || r.apiError(t).Code != tt.wantCode {
			t.Errorf("%s %s with the writer held: status %d %s, want %d %s", tt.call.method, tt.call.path, r.status, r.body, tt.status, tt.wantCode)
		}
	}
	releaseOnce()
	if err := <-done; err != nil {
		t.Fatalf("InTx() error = %v", err)
	}
	if ps, err := e.store.Products(t.Context(), e.org.ID); err != nil || len(ps) != 0 {
		t.Errorf("Products() = %d products, %v; want none written", len(ps), err)
	}
}

// sendGuarded is send through a client that gives up after a time far above
// any answer's, so a request that hangs fails the test instead of stalling
// it.
func (e *testEnv) sendGuarded(t *testing.T, c call) *resp {
	t.Helper()
	return e.sendWith(t, &http.Client{Timeout: 10 * time.Second}, c)
}

// pingDeadline is a store that records the deadline of the context its Ping
// is given.
type pingDeadline struct {
	store.Store
	mu       sync.Mutex
	deadline time.Time
}

func (s *pingDeadline) Ping(ctx context.Context) error {
	s.mu.Lock()
	s.deadline, _ = ctx.Deadline()
	s.mu.Unlock()
	return s.Store.Ping(ctx)
}

// TestReadyzDeadline: /readyz gives its checks at most one second, however
// long the database timeout of other requests is, so an orchestrator's probe
// gets an answer before it gives up.
func TestReadyzDeadline(t *testing.T) {
	rec := &pingDeadline{}
	e := newTestEnvWith(t, envOptions{databaseTimeout: time.Minute, wrapStore: func(s store.Store) store.Store {
		rec.Store = s
		return rec
	}})
	e.run(t, scenario{call: call{method: "GET", path: "/readyz"}, wantStatus: http.StatusOK})
	after := time.Now()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.deadline.IsZero() || rec.deadline.After(after.Add(time.Second)) {
		t.Errorf("Ping() deadline = %v, want one at most 1 s after the request (answered at %v)", rec.deadline, after)
	}
}

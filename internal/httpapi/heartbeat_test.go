package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

// TestProductHeartbeatPatch: a PATCH sets the interval, null turns it off,
// and an absent field leaves it; each change is audited.
func TestProductHeartbeatPatch(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsRead, licentia.ScopeProductsWrite)
	e.createProduct(t, key, productBody("desk-app", "DESK", nil))
	patch := func(body map[string]any) productView {
		t.Helper()
		return e.run(t, scenario{call: call{method: "PATCH", path: productPath("desk-app", ""), key: key, body: body}, wantStatus: http.StatusOK}).product(t)
	}
	if got := patch(map[string]any{"heartbeat_interval_seconds": 3600}).HeartbeatInterval; got == nil || *got != 3600 {
		t.Fatalf("after setting 3600: heartbeat_interval_seconds = %v", got)
	}
	if got := patch(map[string]any{"name": "Desk 2"}).HeartbeatInterval; got == nil || *got != 3600 {
		t.Errorf("after a patch without it: heartbeat_interval_seconds = %v, want 3600", got)
	}
	if got := e.getProduct(t, key, "desk-app").HeartbeatInterval; got == nil || *got != 3600 {
		t.Errorf("read back: heartbeat_interval_seconds = %v, want 3600", got)
	}
	if got := patch(map[string]any{"heartbeat_interval_seconds": nil}).HeartbeatInterval; got != nil {
		t.Errorf("after null: heartbeat_interval_seconds = %d, want null", *got)
	}
	if got := e.getProduct(t, key, "desk-app").HeartbeatInterval; got != nil {
		t.Errorf("read back after null: heartbeat_interval_seconds = %d, want null", *got)
	}
	// created, 3600, the name, and off: a null on a product already off
	// changes nothing and writes nothing.
	patch(map[string]any{"heartbeat_interval_seconds": nil})
	if got := len(productAudit(t, e, e.org.ID)); got != 4 {
		t.Errorf("%d product audit entries, want 4", got)
	}
}

// TestHeartbeatAnswers: the activation and status answers carry the
// interval outside the verdict when the product has one, and not
// otherwise; the verdict is valid for twice the interval.
func TestHeartbeatAnswers(t *testing.T) {
	e := newActEnv(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 2}))
	body := activateBody(issued.LicenceKey, "hb-machine", nil)
	r := e.do(t, "POST", "/v1/activations", "", body, nil)
	if got := r.json(t).(map[string]any); got["heartbeat_interval_seconds"] != nil {
		t.Errorf("activation answer without leases: heartbeat_interval_seconds = %v, want absent", got["heartbeat_interval_seconds"])
	}
	e.do(t, "PATCH", "/v1/admin/products/desk-app", e.allKey, map[string]any{"heartbeat_interval_seconds": 300}, nil)
	e.refreshCatalogue(t)
	e.clock.Advance(2 * time.Second)
	for _, path := range []string{"/v1/activations", "/v1/activations/status"} {
		b := body
		if path != "/v1/activations" {
			b = map[string]any{"licence_key": issued.LicenceKey, "machine_id": "hb-machine"}
		}
		r := e.do(t, "POST", path, "", b, nil)
		got := r.json(t).(map[string]any)
		if got["heartbeat_interval_seconds"] != 300.0 {
			t.Errorf("%s: heartbeat_interval_seconds = %v, want 300", path, got["heartbeat_interval_seconds"])
		}
		p, _ := e.shipped(t, "desk-app")
		v, err := sdk.VerifyVerdict(got["verdict"].(string), p)
		if err != nil {
			t.Fatalf("%s: VerifyVerdict() error = %v", path, err)
		}
		if want := licentia.FormatTime(e.clock.Now().Add(10 * time.Minute)); v.ValidUntil != want {
			t.Errorf("%s: valid_until = %s, want %s", path, v.ValidUntil, want)
		}
	}
}

// fakeTimers is the SDK's injected wait: each wait asked for is recorded,
// and fires when the test says so.
type fakeTimers struct {
	mu    sync.Mutex
	waits []time.Duration
	chans []chan time.Time
	asked chan struct{}
}

func newFakeTimers() *fakeTimers { return &fakeTimers{asked: make(chan struct{}, 100)} }

func (f *fakeTimers) after(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	f.waits, f.chans = append(f.waits, d), append(f.chans, ch)
	f.asked <- struct{}{}
	return ch
}

// next waits until the loop asks for its next wait and returns it.
func (f *fakeTimers) next(t *testing.T) (time.Duration, chan time.Time) {
	t.Helper()
	select {
	case <-f.asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the heartbeat loop asked for no wait")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waits[len(f.waits)-1], f.chans[len(f.chans)-1]
}

// TestSDKHeartbeats: the SDK's loop against the real service, on a fake
// clock: it calls the status route at the product's interval, which keeps
// the seat from the lease sweeper; once the loop stops, the seat is freed
// after twice the interval.
func TestSDKHeartbeats(t *testing.T) {
	e := newActEnv(t)
	e.do(t, "PATCH", "/v1/admin/products/desk-app", e.allKey, map[string]any{"heartbeat_interval_seconds": 60}, nil)
	e.refreshCatalogue(t)
	issued := e.issue(t, e.allKey, issueBody(map[string]any{"limit_kind": "machines", "limit_count": 1}))
	timers := newFakeTimers()
	p, _ := e.shipped(t, "desk-app")
	app, err := sdk.NewClient(sdk.Config{BaseURL: e.srv.URL, HTTPClient: e.srv.Client(), Product: p, Major: 3,
		MachineID: "hb-machine", Store: sdk.FileStore(t.TempDir() + "/licence.json"), Now: e.clock.Now, After: timers.after})
	if err != nil {
		t.Fatalf("NewClient() error = %v", err)
	}
	if _, err := app.Activate(t.Context(), issued.LicenceKey, sdk.Machine{Label: "Ada", OS: "linux", AppVersion: "3.1.0"}); err != nil {
		t.Fatalf("Activate() error = %v", err)
	}
	if got := app.HeartbeatInterval(); got != time.Minute {
		t.Fatalf("HeartbeatInterval() = %v, want 1m", got)
	}
	sweeper := activation.New(activation.Options{Store: e.store, Clock: e.clock, Keys: e.keys, Catalogue: e.cat, Validity: 7 * 24 * time.Hour})

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- app.Heartbeats(ctx) }()
	wait, fire := timers.next(t)
	for i := range 5 {
		if wait != time.Minute {
			t.Fatalf("heartbeat %d: the loop waits %v, want 1m", i, wait)
		}
		e.clock.Advance(wait)
		checked := app.State().CheckedAt
		fire <- e.clock.Now()
		// The loop asks for its next wait once the status call is made.
		wait, fire = timers.next(t)
		if st := app.State(); !st.CheckedAt.After(checked) || !st.Valid || !st.Seated || st.Stale {
			t.Fatalf("heartbeat %d: state %+v, want a fresh seated check", i, st)
		}
		if n, err := sweeper.FreeExpiredLeases(t.Context()); err != nil || n != 0 {
			t.Fatalf("heartbeat %d: FreeExpiredLeases() = %d, %v; want nothing freed", i, n, err)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Heartbeats() = %v, want context.Canceled", err)
	}

	// Silent: the seat goes just after twice the interval.
	e.clock.Advance(2 * time.Minute)
	if n, err := sweeper.FreeExpiredLeases(t.Context()); err != nil || n != 0 {
		t.Fatalf("at twice the interval: FreeExpiredLeases() = %d, %v; want 0", n, err)
	}
	e.clock.Advance(time.Millisecond)
	if n, err := sweeper.FreeExpiredLeases(t.Context()); err != nil || n != 1 {
		t.Fatalf("past twice the interval: FreeExpiredLeases() = %d, %v; want 1", n, err)
	}
}

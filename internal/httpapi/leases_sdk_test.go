package httpapi_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/licentia/licentia/sdk"
)

// switchable is a transport that fails every request while down is set,
// as a network that went away.
type switchable struct {
	next http.RoundTripper
	down atomic.Bool
}

func (s *switchable) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.down.Load() {
		return nil, errors.New("network unreachable")
	}
	return s.next.RoundTrip(r)
}

// newLeaseClient is an application of desk-app on machineID with the env's
// clock, fake timers and a network that can be cut.
func (e *actEnv) newLeaseClient(t *testing.T, machineID string, timers *fakeTimers) (*sdk.Client, *switchable) {
	t.Helper()
	p, _ := e.shipped(t, "desk-app")
	net := &switchable{next: e.srv.Client().Transport}
	c, err := sdk.NewClient(sdk.Config{BaseURL: e.srv.URL, HTTPClient: &http.Client{Transport: net}, Product: p, Major: 3,
		MachineID: machineID, Store: sdk.FileStore(t.TempDir() + "/licence.json"), Now: e.clock.Now, After: timers.after})
	if err != nil {
		t.Fatalf("NewClient() error = %v", err)
	}
	return c, net
}

// TestSDKLease: Client.Lease against the real service on the fake clock
// takes a lease and renews it at half its TTL; while the network is down
// it keeps the lease, valid until its end and not after; once the
// network is back it takes a new lease for the one that ended; Close
// releases it, so another machine takes the only place at once.
func TestSDKLease(t *testing.T) {
	e := newLeaseEnv(t, envOptions{}, map[string]any{"max_concurrent": 1, "lease_ttl_seconds": 120})
	key := e.issue(t, e.allKey, issueBody(map[string]any{"limit_count": 2})).LicenceKey
	timers := newFakeTimers()
	app, net := e.newLeaseClient(t, "lease-a", timers)
	if _, err := app.Lease(t.Context()); !errors.Is(err, sdk.ErrNoLicence) {
		t.Errorf("Lease() before a key = %v, want ErrNoLicence", err)
	}
	if _, err := app.Activate(t.Context(), key, sdk.Machine{Label: "A", OS: "linux", AppVersion: "3.0.0"}); err != nil {
		t.Fatalf("Activate() error = %v", err)
	}
	lease, err := app.Lease(t.Context())
	if err != nil {
		t.Fatalf("Lease() error = %v", err)
	}
	if !lease.Valid() || !lease.ExpiresAt().Equal(e.clock.Now().Add(120*time.Second)) {
		t.Errorf("new lease valid %v, ends %v; want valid, ending a TTL from now", lease.Valid(), lease.ExpiresAt())
	}
	first := *lease.Verdict().LeaseID

	// Renewal at half the TTL keeps the id and moves the end.
	wait, fire := timers.next(t)
	if wait != 60*time.Second {
		t.Errorf("first renewal after %v, want 60s (half the TTL)", wait)
	}
	e.clock.Advance(wait)
	fire <- e.clock.Now()
	wait, fire = timers.next(t)
	if *lease.Verdict().LeaseID != first || !lease.ExpiresAt().Equal(e.clock.Now().Add(120*time.Second)) || lease.Err() != nil {
		t.Errorf("after renewal: lease %s ends %v (err %v); want %s ending a TTL from now", *lease.Verdict().LeaseID, lease.ExpiresAt(), lease.Err(), first)
	}

	// The network goes: renewals fail, the lease holds until its end.
	net.down.Store(true)
	ends := lease.ExpiresAt()
	e.clock.Advance(wait)
	fire <- e.clock.Now()
	wait, fire = timers.next(t)
	if lease.Err() == nil || !lease.Valid() || !lease.ExpiresAt().Equal(ends) {
		t.Errorf("renewal without network: err %v, valid %v, ends %v; want an error, valid, ending %v", lease.Err(), lease.Valid(), lease.ExpiresAt(), ends)
	}
	if wait > 30*time.Second {
		t.Errorf("retry after a failed renewal in %v, want at most 30s", wait)
	}
	e.clock.Set(ends)
	if !lease.Valid() {
		t.Errorf("lease not valid at its very end")
	}
	e.clock.Advance(time.Millisecond)
	if lease.Valid() {
		t.Errorf("lease still valid offline after its end")
	}

	// The network is back: the ended lease is taken anew.
	net.down.Store(false)
	fire <- e.clock.Now()
	timers.next(t)
	if !lease.Valid() || lease.Err() != nil || *lease.Verdict().LeaseID == first {
		t.Errorf("after the network came back: valid %v, err %v, id %s; want a new valid lease", lease.Valid(), lease.Err(), *lease.Verdict().LeaseID)
	}

	other, _ := e.newLeaseClient(t, "lease-b", newFakeTimers())
	if _, err := other.Activate(t.Context(), key, sdk.Machine{Label: "B", OS: "linux", AppVersion: "3.0.0"}); err != nil {
		t.Fatalf("Activate(b) error = %v", err)
	}
	_, err = other.Lease(t.Context())
	if se, ok := errors.AsType[*sdk.Error](err); !ok || se.Code != sdk.CodeConcurrencyLimit {
		t.Errorf("Lease() on a second machine with the place taken = %v, want concurrency_limit_reached", err)
	}
	if released, err := lease.Close(); err != nil || !released {
		t.Errorf("Close() = %v, %v; want released", released, err)
	}
	if _, err := other.Lease(t.Context()); err != nil {
		t.Errorf("Lease() on the second machine after Close() error = %v", err)
	}
}

// TestSDKBorrow: a borrowed lease needs no renewal and holds offline until
// its end; an application without an activation is told so.
func TestSDKBorrow(t *testing.T) {
	e := newLeaseEnv(t, envOptions{}, map[string]any{"max_borrow_hours": 72})
	key := e.issue(t, e.allKey, issueBody(nil)).LicenceKey
	app, net := e.newLeaseClient(t, "borrower", newFakeTimers())
	if _, err := app.Activate(t.Context(), key, sdk.Machine{Label: "L", OS: "macOS", AppVersion: "3.0.0"}); err != nil {
		t.Fatalf("Activate() error = %v", err)
	}
	lease, err := app.Borrow(t.Context(), 72)
	if err != nil {
		t.Fatalf("Borrow() error = %v", err)
	}
	net.down.Store(true)
	end := e.clock.Now().Add(72 * time.Hour)
	e.clock.Set(end)
	if !lease.Valid() {
		t.Errorf("borrowed lease not valid offline at its end")
	}
	e.clock.Advance(time.Millisecond)
	if lease.Valid() {
		t.Errorf("borrowed lease valid offline after its end")
	}
	if _, err := lease.Close(); err == nil {
		t.Errorf("Close() without network succeeded")
	}

	// The maker frees the machine's seat: a lease is refused until it
	// activates again.
	freed, _ := e.newLeaseClient(t, "freed", newFakeTimers())
	a, err := freed.Activate(t.Context(), key, sdk.Machine{Label: "F", OS: "linux", AppVersion: "3.0.0"})
	if err != nil {
		t.Fatalf("Activate() error = %v", err)
	}
	e.run(t, scenario{call: call{method: "POST", path: "/v1/admin/activations/" + a.ID + "/deactivate", key: e.allKey}, wantStatus: http.StatusOK})
	_, err = freed.Lease(t.Context())
	if se, ok := errors.AsType[*sdk.Error](err); !ok || se.Code != sdk.CodeActivationRequired {
		t.Errorf("Lease() of a freed machine = %v, want activation_required", err)
	}
}

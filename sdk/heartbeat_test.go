package sdk_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/licentia/licentia/sdk"
)

// TestHeartbeatInterval: an answer with the interval makes Check due at
// it, kept across a restart; an answer without it (a product without
// leases, or an older server) leaves Check once a day.
func TestHeartbeatInterval(t *testing.T) {
	fx := activated(t)
	if got, next := fx.client.HeartbeatInterval(), fx.client.State().NextCheckAt; got != 0 || !next.Equal(fxStart.Add(sdk.CheckInterval)) {
		t.Fatalf("without leases: HeartbeatInterval() = %v, NextCheckAt = %v; want 0 and a day on", got, next)
	}
	fx.server.mu.Lock()
	fx.server.heartbeat = 120
	fx.server.mu.Unlock()
	fx.clock.Advance(sdk.CheckInterval)
	if _, err := fx.client.Check(t.Context()); err != nil {
		t.Fatalf("Check() error = %v", err)
	}
	checked := fx.clock.Now()
	if got := fx.client.HeartbeatInterval(); got != 2*time.Minute {
		t.Fatalf("HeartbeatInterval() = %v, want 2m", got)
	}
	if next := fx.client.State().NextCheckAt; !next.Equal(checked.Add(2 * time.Minute)) {
		t.Errorf("NextCheckAt = %v, want two minutes after the check", next)
	}
	// Not due yet: no request.
	before := fx.server.requests["/v1/activations/status"]
	fx.clock.Advance(2*time.Minute - time.Millisecond)
	if _, err := fx.client.Check(t.Context()); err != nil {
		t.Fatalf("Check() error = %v", err)
	}
	if got := fx.server.requests["/v1/activations/status"]; got != before {
		t.Errorf("status requests before the interval = %d, want %d", got, before)
	}
	restarted := newClient(t, fx.server, fx.path)
	if got := restarted.HeartbeatInterval(); got != 2*time.Minute {
		t.Errorf("after a restart: HeartbeatInterval() = %v, want 2m", got)
	}

	fx.server.mu.Lock()
	fx.server.heartbeat = 0
	fx.server.mu.Unlock()
	fx.clock.Advance(time.Millisecond)
	if _, err := fx.client.Check(t.Context()); err != nil {
		t.Fatalf("Check() error = %v", err)
	}
	if got, next := fx.client.HeartbeatInterval(), fx.client.State().NextCheckAt; got != 0 || !next.Equal(fx.clock.Now().Add(sdk.CheckInterval)) {
		t.Errorf("leases turned off: HeartbeatInterval() = %v, NextCheckAt = %v; want 0 and a day on", got, next)
	}
}

// TestHeartbeatsIdle: without a licence the loop cannot go online; it
// waits rather than spin, and stops with its context.
func TestHeartbeatsIdle(t *testing.T) {
	clock := &testClock{t: fxStart}
	f := newFakeServer(t, clock)
	waits := make(chan time.Duration, 10)
	fires := make(chan time.Time)
	c := newClient(t, f, t.TempDir()+"/licence.json", func(cfg *sdk.Config) {
		cfg.After = func(d time.Duration) <-chan time.Time { waits <- d; return fires }
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Heartbeats(ctx) }()
	select {
	case d := <-waits:
		if d != time.Minute {
			t.Errorf("idle wait = %v, want 1m", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the loop asked for no wait")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Heartbeats() = %v, want context.Canceled", err)
	}
	if n := len(f.requests); n != 0 {
		t.Errorf("%d kinds of request sent without a licence, want none", n)
	}
}

package activation_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// heartbeat turns desk-app's heartbeat leases on at interval seconds, or
// off when interval is nil, and lets the catalogue see it.
func (f *fixture) heartbeat(t *testing.T, interval *int64) {
	t.Helper()
	in := admin.ProductPatch{HeartbeatIntervalSeconds: interval}
	if interval == nil {
		in.SetNull("/heartbeat_interval_seconds")
	}
	v, err := f.admin.UpdateProduct(t.Context(), licentia.OperatorActor, f.org.ID, "desk-app", in)
	if err != nil {
		t.Fatalf("UpdateProduct() error = %v", err)
	}
	if got := v.Product.HeartbeatIntervalSeconds; (got == nil) != (interval == nil) || got != nil && *got != *interval {
		t.Fatalf("heartbeat_interval_seconds = %v, want %v", got, interval)
	}
	if err := f.cat.Refresh(t.Context()); err != nil {
		t.Fatalf("Catalogue.Refresh() error = %v", err)
	}
}

func (f *fixture) sweep(t *testing.T) int {
	t.Helper()
	n, err := f.svc.FreeExpiredLeases(t.Context())
	if err != nil {
		t.Fatalf("FreeExpiredLeases() error = %v", err)
	}
	return n
}

func (f *fixture) liveCount(t *testing.T) int64 {
	t.Helper()
	c, err := f.st.CountLicences(t.Context(), f.org.ID, nil, start, f.clock.Now())
	if err != nil {
		t.Fatalf("CountLicences() error = %v", err)
	}
	return c.LiveMachines
}

// TestLeaseExpiry frees a silent machine just past twice the interval and
// not at it, as a deactivation by the system, and leaves a machine that
// calls the status route, and a product without leases, alone.
func TestLeaseExpiry(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f := newFixture(t, e.open(t))
			ctx := t.Context()
			f.heartbeat(t, ptr[int64](60))
			licenceID, key := f.issue(t, 5)
			silent := f.activateMachine(t, key, "silent")
			f.activateMachine(t, key, "beating")

			f.clock.Advance(100 * time.Second)
			f.status(t, key, "beating") // last seen 100 s ago: renewed
			f.clock.Advance(20 * time.Second)
			if n := f.sweep(t); n != 0 {
				t.Fatalf("at exactly twice the interval: freed %d, want 0", n)
			}
			f.clock.Advance(time.Millisecond)
			if n := f.sweep(t); n != 1 {
				t.Fatalf("just past twice the interval: freed %d, want 1", n)
			}
			if got := f.liveMachines(t, licenceID); len(got) != 1 || got[0] != "beating" {
				t.Fatalf("live machines = %v, want [beating]", got)
			}
			if got := f.liveCount(t); got != 1 {
				t.Errorf("counts: live machines = %d, want 1", got)
			}
			a, err := f.st.Activation(ctx, f.org.ID, silent)
			if err != nil || a.DeactivatedAt == nil || !a.DeactivatedAt.Equal(f.clock.Now()) {
				t.Errorf("silent activation = %+v, %v; want deactivated now", a, err)
			}
			entries, err := f.st.LicenceAudit(ctx, f.org.ID, licenceID)
			if err != nil {
				t.Fatalf("LicenceAudit() error = %v", err)
			}
			last := entries[len(entries)-1]
			if last.Action != licentia.AuditActivationDeactivated || last.Actor.Type != licentia.ActorSystem {
				t.Errorf("last audit entry = %s by %s, want %s by system", last.Action, last.Actor.Type, licentia.AuditActivationDeactivated)
			}
			evs, err := f.st.OrganizationEvents(ctx, f.org.ID)
			if err != nil {
				t.Fatalf("OrganizationEvents() error = %v", err)
			}
			if ev := evs[len(evs)-1]; ev.Type != licentia.EventActivationDeactivated {
				t.Errorf("last event = %s, want %s", ev.Type, licentia.EventActivationDeactivated)
			}

			// The beating machine, last seen 20.001 s ago, holds on until
			// its own lease runs out.
			f.clock.Advance(100*time.Second - time.Millisecond)
			if n := f.sweep(t); n != 0 {
				t.Fatalf("beating machine at 120 s: freed %d, want 0", n)
			}
			f.clock.Advance(time.Millisecond)
			if n := f.sweep(t); n != 1 {
				t.Fatalf("beating machine past 120 s: freed %d, want 1", n)
			}
			if got := f.liveCount(t); got != 0 {
				t.Errorf("counts: live machines = %d, want 0", got)
			}

			// Without leases, silence frees nothing.
			f.heartbeat(t, nil)
			f.activateMachine(t, key, "quiet")
			f.clock.Advance(365 * 24 * time.Hour)
			if n := f.sweep(t); n != 0 {
				t.Errorf("product without leases: freed %d, want 0", n)
			}
		})
	}
}

// TestLeaseVerdictValidity bounds a verdict of a product with leases to
// twice the interval, and leaves the configured validity when it is
// shorter or leases are off.
func TestLeaseVerdictValidity(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f := newFixture(t, e.open(t))
			_, key := f.issue(t, 5)
			for _, tt := range []struct {
				interval *int64
				want     time.Duration
			}{
				{ptr[int64](60), 2 * time.Minute},
				{ptr[int64](3600), 2 * time.Hour},
				{ptr[int64](2592000), 7 * 24 * time.Hour}, // the configured validity is shorter
				{nil, 7 * 24 * time.Hour},
			} {
				f.heartbeat(t, tt.interval)
				f.clock.Advance(2 * time.Second) // past the reuse of the last verdict
				res, err := f.svc.Status(t.Context(), seat(key, "ada-laptop"))
				if err != nil {
					t.Fatalf("Status() error = %v", err)
				}
				if (res.Heartbeat == nil) != (tt.interval == nil) || res.Heartbeat != nil && *res.Heartbeat != *tt.interval {
					t.Errorf("interval %v: answer's interval = %v", tt.interval, res.Heartbeat)
				}
				v := f.verdict(t, res.Verdict)
				if want := licentia.FormatTime(f.clock.Now().Add(tt.want)); v.ValidUntil != want {
					t.Errorf("interval %v: valid_until = %s, want %s", tt.interval, v.ValidUntil, want)
				}
			}
		})
	}
}

// TestLeaseSweepersRace runs two sweepers at once over many expired
// leases: each activation is freed once, with one audit entry and one
// event, and the counts end right.
func TestLeaseSweepersRace(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			f := newFixture(t, e.open(t))
			ctx := t.Context()
			f.heartbeat(t, ptr[int64](60))
			const licences, machines = 6, 25
			var ids []string
			for range licences {
				id, key := f.issue(t, machines)
				ids = append(ids, id)
				for m := range machines {
					f.activateMachine(t, key, fmt.Sprintf("m%d", m))
				}
			}
			f.clock.Advance(2*time.Minute + time.Millisecond)
			var wg sync.WaitGroup
			freed := make([]int, 2)
			for i := range freed {
				wg.Go(func() {
					n, err := f.svc.FreeExpiredLeases(ctx)
					if err != nil {
						t.Errorf("FreeExpiredLeases() error = %v", err)
					}
					freed[i] = n
				})
			}
			wg.Wait()
			if got := freed[0] + freed[1]; got != licences*machines {
				t.Errorf("freed %v, together %d, want %d", freed, got, licences*machines)
			}
			for _, id := range ids {
				if got := f.liveMachines(t, id); len(got) != 0 {
					t.Errorf("licence %s: live machines %v", id, got)
				}
				entries, err := f.st.LicenceAudit(ctx, f.org.ID, id)
				if err != nil {
					t.Fatalf("LicenceAudit() error = %v", err)
				}
				n := 0
				for _, en := range entries {
					if en.Action == licentia.AuditActivationDeactivated {
						n++
					}
				}
				if n != machines {
					t.Errorf("licence %s: %d deactivation entries, want %d", id, n, machines)
				}
			}
			evs, err := f.st.OrganizationEvents(ctx, f.org.ID)
			if err != nil {
				t.Fatalf("OrganizationEvents() error = %v", err)
			}
			n := 0
			for _, ev := range evs {
				if ev.Type == licentia.EventActivationDeactivated {
					n++
				}
			}
			if n != licences*machines {
				t.Errorf("%d activation.deactivated events, want %d", n, licences*machines)
			}
			if got := f.liveCount(t); got != 0 {
				t.Errorf("counts: live machines = %d, want 0", got)
			}
		})
	}
}

// activateMachine takes a seat for machineID and returns its activation
// id.
func (f *fixture) activateMachine(t *testing.T, key, machineID string) string {
	t.Helper()
	res, err := f.svc.Activate(t.Context(), activate(key, machine(machineID)))
	if err != nil {
		t.Fatalf("Activate(%s) error = %v", machineID, err)
	}
	return res.Activation.ID
}

package activation_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// transfers sets desk-app's transfers_per_30_days.
func (f *fixture) transfers(t *testing.T, n int64) {
	t.Helper()
	if _, err := f.admin.UpdateProduct(t.Context(), licentia.OperatorActor, f.org.ID, "desk-app", admin.ProductPatch{TransfersPer30Days: &n}); err != nil {
		t.Fatalf("UpdateProduct(transfers_per_30_days) error = %v", err)
	}
}

// TestTransfersAcross30Days: on a full licence a new machine frees the
// machine seen least recently once that one was unseen for 24 hours, at
// most transfers_per_30_days times in any rolling 30 days, on the fake
// clock; past that, 409. A licence's own 0 turns transfers off.
func TestTransfersAcross30Days(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			f.transfers(t, 2)
			id, key := f.issue(t, 1)
			try := func(m string) error {
				_, err := f.svc.Activate(t.Context(), activate(key, machine(m)))
				return err
			}
			want := func(what string, err error, ok bool) {
				t.Helper()
				if ok && err != nil || !ok && licentia.ErrorCode(err) != licentia.CodeSeatLimitReached {
					t.Errorf("%s: error = %v, want ok %v (else seat_limit_reached)", what, err, ok)
				}
			}
			want("a", try("a"), true)
			f.clock.Advance(24*time.Hour - time.Millisecond)
			want("b, a unseen for under a day", try("b"), false)
			f.clock.Advance(time.Millisecond)
			first := f.clock.Now()
			want("b, a unseen for a day", try("b"), true)
			if live := f.liveMachines(t, id); len(live) != 1 || live[0] != "b" {
				t.Fatalf("live machines %v, want [b]", live)
			}
			n, data := f.eventsOf(t, id, licentia.EventActivationDeactivated)
			if n != 1 || data["reason"] != "transfer" {
				t.Errorf("%d activation.deactivated events, last data %v; want one with reason transfer", n, data)
			}
			audit, err := f.st.LicenceAudit(t.Context(), f.org.ID, id)
			if err != nil {
				t.Fatalf("LicenceAudit() error = %v", err)
			}
			system := 0
			for _, e := range audit {
				if e.Action == licentia.AuditActivationDeactivated && e.Actor.Type == licentia.ActorSystem {
					system++
				}
			}
			if system != 1 {
				t.Errorf("%d activation.deactivated audit entries by the system, want 1", system)
			}
			f.clock.Advance(10 * 24 * time.Hour)
			want("c, second transfer", try("c"), true)
			f.clock.Advance(10 * 24 * time.Hour)
			want("d, third in 30 days", try("d"), false)
			// The first transfer leaves the window 30 days after it was made.
			f.clock.Set(first.Add(30*24*time.Hour - time.Millisecond))
			want("d, a millisecond early", try("d"), false)
			f.clock.Set(first.Add(30 * 24 * time.Hour))
			want("d, 30 days after the first", try("d"), true)

			off := int64(0)
			if _, err := f.admin.UpdateLicence(t.Context(), licentia.OperatorActor, f.org.ID, id, admin.LicenceChange{TransfersPer30Days: &off}); err != nil {
				t.Fatalf("UpdateLicence(transfers 0) error = %v", err)
			}
			f.clock.Advance(60 * 24 * time.Hour)
			want("e, the licence's own 0", try("e"), false)
			checkCounters(t, f)
		})
	}
}

// TestTransferRace: new machines racing for a full licence whose machines
// are all unseen for days: exactly one transfer, never more machines than
// the limit, and the counters equal a recount, on both engines.
func TestTransferRace(t *testing.T) {
	const racers = 8
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			f.transfers(t, 5)
			id, key := f.issue(t, 2)
			f.activateMachine(t, key, "old-1")
			f.activateMachine(t, key, "old-2")
			f.clock.Advance(3 * 24 * time.Hour)
			res, errs := race(racers, func(i int) (*activation.Result, error) {
				return f.svc.Activate(t.Context(), activate(key, machine(fmt.Sprintf("racer-%d", i))))
			})
			created := 0
			for i, err := range errs {
				switch {
				case err == nil && res[i].Created:
					created++
				case err != nil && licentia.ErrorCode(err) != licentia.CodeSeatLimitReached:
					t.Errorf("racer %d: error = %v", i, err)
				}
			}
			// Each transfer frees one machine unseen for a day; the racers'
			// own machines were just seen, so two transfers at most.
			if live := f.liveMachines(t, id); len(live) != 2 || created < 1 || created > 2 {
				t.Errorf("live machines %v, %d created; want 2 live and 1 or 2 created", live, created)
			}
			if n, err := f.st.TransfersSince(t.Context(), f.org.ID, id, start); err != nil || n != int64(created) {
				t.Errorf("TransfersSince() = %d, %v; want %d", n, err, created)
			}
			checkCounters(t, f)
		})
	}
}

package activation_test

import (
	"testing"
	"time"

	"github.com/licentia/licentia/internal/activation"
)

// TestSweepLeases, on both engines: the sweep deletes the leases that hold
// no place (ended, or of a freed activation) and keeps the one in use; a
// machine that holds an ended lease is given a new one.
func TestSweepLeases(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			_, key := f.issue(t, 3)
			take := func(machineID string) *activation.LeaseResult {
				t.Helper()
				res, err := f.svc.TakeLease(t.Context(), activation.TakeLease{LicenceKey: &key, MachineID: &machineID})
				if err != nil {
					t.Fatalf("TakeLease(%s) error = %v", machineID, err)
				}
				return res
			}
			for _, m := range []string{"short", "freed", "kept"} {
				if _, err := f.svc.Activate(t.Context(), activate(key, activation.Machine{ID: m, Label: m})); err != nil {
					t.Fatalf("Activate(%s) error = %v", m, err)
				}
			}
			short := take("short")
			take("freed")
			f.clock.Advance(10 * time.Minute)
			take("kept")
			freed := "freed"
			if _, err := f.svc.Deactivate(t.Context(), seat(key, freed)); err != nil {
				t.Fatalf("Deactivate() error = %v", err)
			}
			f.clock.Advance(5 * time.Minute) // short's lease (15 minutes) ends now
			n, err := f.svc.SweepLeases(t.Context())
			if err != nil || n != 2 {
				t.Errorf("SweepLeases() = %d, %v; want 2 (ended and freed)", n, err)
			}
			if inUse, _ := f.st.CountLeasesInUse(t.Context(), f.clock.Now()); inUse != 1 {
				t.Errorf("leases in use after the sweep = %d, want 1 (kept)", inUse)
			}
			if again := take("short"); again.Lease.ID == short.Lease.ID || !again.Created {
				t.Errorf("lease after an ended one: %+v, want a new one", again.Lease)
			}
		})
	}
}

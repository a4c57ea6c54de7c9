package activation_test

import (
	"fmt"
	"testing"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/sdk"
)

func offline(key string, m activation.Machine, format *string) activation.OfflineActivate {
	return activation.OfflineActivate{Format: format, LicenceKey: &key, MachineID: &m.ID, Label: &m.Label, OS: &m.OS, AppVersion: &m.AppVersion}
}

// TestActivateOffline: an offline request takes a seat as an activation
// does, on both engines: with or without its format marker, 200 for a
// machine that holds a seat already, the seat limit counted with online
// seats, and offline and online machines racing for the last seat leave
// exactly one winner. A request of another format is refused and writes
// nothing.
func TestActivateOffline(t *testing.T) {
	const racers = 8
	format := sdk.OfflineRequestFormat
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			id, key := f.issue(t, 3)
			res, err := f.svc.ActivateOffline(t.Context(), offline(key, machine("a"), &format))
			if err != nil || !res.Created || res.Activation.MachineID != "a" {
				t.Fatalf("ActivateOffline(a) = %+v, %v; want a new seat", res, err)
			}
			if res, err = f.svc.ActivateOffline(t.Context(), offline(key, machine("a"), nil)); err != nil || res.Created {
				t.Errorf("ActivateOffline(a) again = %+v, %v; want the seat held (200)", res, err)
			}
			if _, err := f.svc.Activate(t.Context(), activate(key, machine("b"))); err != nil {
				t.Fatalf("Activate(b) error = %v", err)
			}
			other := "licentia-offline-activation-request/2"
			_, err = f.svc.ActivateOffline(t.Context(), offline(key, machine("c"), &other))
			if licentia.ErrorCode(err) != licentia.CodeValidationFailed {
				t.Errorf("ActivateOffline() of another format error = %v, want validation_failed", err)
			}
			if n := f.created(t, id); n != 2 {
				t.Errorf("%d activation.created, want 2", n)
			}

			res2, errs := race(racers, func(i int) (*activation.Result, error) {
				m := machine(fmt.Sprintf("racer-%d", i))
				if i%2 == 0 {
					return f.svc.ActivateOffline(t.Context(), offline(key, m, &format))
				}
				return f.svc.Activate(t.Context(), activate(key, m))
			})
			winners := 0
			for i, err := range errs {
				switch {
				case err == nil && res2[i].Created:
					winners++
				case licentia.ErrorCode(err) != licentia.CodeSeatLimitReached:
					t.Errorf("racer %d: %+v, %v; want a seat or seat_limit_reached", i, res2[i], err)
				}
			}
			if winners != 1 || len(f.liveMachines(t, id)) != 3 || f.created(t, id) != 3 {
				t.Errorf("%d winners, live %v; want one winner and 3 live machines", winners, f.liveMachines(t, id))
			}
		})
	}
}

package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testStatusReadsAtOnce: many status checks' reads at once, which the
// engines answer in groups, each get what the same read alone gets: the
// licence, the machine's seat on that licence (two licences with a machine
// of the same id keep their own), no seat, or licence_not_found.
func testStatusReadsAtOnce(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	first, second := newLicence(o.ID, p.ID, "a@example.com", base), newLicence(o.ID, p.ID, "b@example.com", base)
	second.ExpiresAt, second.LimitCount = ptr(base.Add(24*time.Hour)), 7
	createLicences(t, s, first, second)
	var seats []*licentia.Activation
	for m := range 3 {
		a := newActivation(first, fmt.Sprintf("machine-%d", m))
		a.LastSeenAt = base.Add(time.Duration(m) * time.Second)
		seats = append(seats, a)
	}
	seats = append(seats, newActivation(second, "machine-0"))
	createActivations(t, s, seats...)

	type read struct{ licenceID, machineID string }
	type answer struct {
		licence *licentia.Licence
		seat    *store.Seat
		code    licentia.Code
	}
	var reads []read
	for _, id := range []string{first.ID, second.ID, licentia.NewID()} {
		for m := range 5 {
			reads = append(reads, read{id, fmt.Sprintf("machine-%d", m)})
		}
	}
	alone := map[read]answer{}
	for _, r := range reads {
		l, seat, err := s.LicenceWithSeat(ctx, r.licenceID, r.machineID)
		alone[r] = answer{l, seat, licentia.ErrorCode(err)}
	}
	if a := alone[read{second.ID, "machine-0"}]; a.seat == nil || a.seat.ActivationID != seats[3].ID {
		t.Fatalf("LicenceWithSeat(second, machine-0) seat = %+v, want %s", a.seat, seats[3].ID)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	wrong := 0
	for w := range 32 {
		wg.Go(func() {
			for i := range 40 {
				r := reads[(w*7+i)%len(reads)]
				l, seat, err := s.LicenceWithSeat(ctx, r.licenceID, r.machineID)
				got, want := answer{l, seat, licentia.ErrorCode(err)}, alone[r]
				if got.code != want.code || cmp.Diff(want.licence, got.licence) != "" || cmp.Diff(want.seat, got.seat) != "" {
					mu.Lock()
					if wrong++; wrong <= 3 {
						t.Errorf("LicenceWithSeat(%s, %s) at once = %+v, %v; alone %+v", r.licenceID, r.machineID, got, err, want)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
}

// Seat stores an organization, a product, a licence of it granting one
// feature, and a live activation of machine on it, for an engine's own
// tests of its status read.
func Seat(t *testing.T, s store.Store, machine string) (*licentia.Licence, *licentia.Activation) {
	t.Helper()
	o, p := licenceSetup(t, s, "seat")
	putFeature(t, s, p, "export", "Export", base)
	l := newLicence(o.ID, p.ID, "seat@example.com", base)
	l.ExpiresAt = ptr(base.Add(30 * 24 * time.Hour))
	l.Features = []licentia.FeatureGrant{{Code: "export"}}
	createLicences(t, s, l)
	a := newActivation(l, machine)
	createActivations(t, s, a)
	return l, a
}

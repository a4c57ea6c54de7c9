package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// watermark reads the sweep watermark, the epoch when unset.
func watermark(t *testing.T, r store.Reader) time.Time {
	t.Helper()
	v, err := r.Setting(t.Context(), store.SettingSweepWatermark)
	if err != nil {
		t.Fatalf("Setting() error = %v", err)
	}
	if v == "" {
		return time.UnixMilli(0).UTC()
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("watermark %q: %v", v, err)
	}
	return time.UnixMilli(ms).UTC()
}

// testSweepSameInstant sweeps, in batches of 3, licences of which 7 share
// one expiry instant: none of them is split from the others, every sweep
// leaves the counts right, and the watermark never passes now.
func testSweepSameInstant(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	edge := base
	var all []*licentia.Licence
	for i := range 9 {
		l := newLicence(o.ID, p.ID, fmt.Sprintf("c%d@example.com", i), base.Add(-time.Hour))
		l.ExpiresAt = ptr(edge)
		if i < 2 {
			l.ExpiresAt = ptr(edge.Add(-time.Millisecond))
		}
		all = append(all, l)
	}
	createLicences(t, s, all...)
	a := newActivation(all[8], "machine-1")
	createActivations(t, s, a)
	live := map[string]int64{all[8].ID: 1}
	now := edge.Add(time.Hour)
	check := func(label string) {
		t.Helper()
		for _, at := range []time.Time{edge.Add(-2 * time.Millisecond), edge.Add(-time.Millisecond), edge, now} {
			want := BruteCounts(all, live, o.ID, nil, base, at)
			got, err := s.CountLicences(ctx, o.ID, nil, base, at)
			if err != nil || *got != want {
				t.Errorf("%s: CountLicences(now %s) = %+v, %v, want %+v", label, at.Format(time.RFC3339Nano), got, err, want)
			}
		}
	}
	for _, want := range []struct {
		moved     int
		watermark time.Time
	}{{2, edge.Add(-time.Millisecond)}, {7, edge}, {0, now}, {0, now}} {
		var moved int
		inTx(t, s, func(tx store.Tx) error {
			var err error
			moved, err = tx.SweepLicences(ctx, now, 3)
			return err
		})
		if w := watermark(t, s); moved != want.moved || !w.Equal(want.watermark) {
			t.Errorf("SweepLicences() moved %d, watermark %s; want %d, %s", moved, w, want.moved, want.watermark)
		}
		check(fmt.Sprintf("after moving %d", moved))
	}
	// A sweep at an earlier time leaves the watermark where it is.
	inTx(t, s, func(tx store.Tx) error {
		moved, err := tx.SweepLicences(ctx, edge, 3)
		if moved != 0 || err != nil {
			t.Errorf("SweepLicences(earlier) = %d, %v, want 0, nil", moved, err)
		}
		return err
	})
	if w := watermark(t, s); !w.Equal(now) {
		t.Errorf("watermark after an earlier sweep = %s, want %s", w, now)
	}
	err := s.InTx(ctx, func(tx store.Tx) error {
		_, err := tx.SweepLicences(ctx, now, 0)
		return err
	})
	if err == nil {
		t.Errorf("SweepLicences(batch 0) error = nil, want one")
	}
}

// testCountsAsStored issues and changes licences expiring a fraction of a
// millisecond after the watermark: stores keep such an expiry at the
// watermark itself, and count the licence as they keep it, lapsed.
func testCountsAsStored(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	changed := newLicence(o.ID, p.ID, "changed@example.com", base.Add(-time.Hour))
	createLicences(t, s, changed)
	inTx(t, s, func(tx store.Tx) error {
		_, err := tx.SweepLicences(ctx, base, 10)
		return err
	})
	fine := ptr(base.Add(time.Millisecond / 2))
	issued := newLicence(o.ID, p.ID, "issued@example.com", base.Add(-time.Hour))
	issued.ExpiresAt = fine
	createLicences(t, s, issued)
	updateLicence(t, s, o.ID, changed.ID, func(l *licentia.Licence) { l.ExpiresAt = fine })
	for _, now := range []time.Time{base.Add(-time.Millisecond), base, base.Add(time.Hour)} {
		want := BruteCounts([]*licentia.Licence{stored(issued), stored(updateLicenceCopy(changed, fine))}, nil, o.ID, nil, base, now)
		got, err := s.CountLicences(ctx, o.ID, nil, base, now)
		if err != nil || *got != want {
			t.Errorf("CountLicences(now %s) = %+v, %v, want %+v", now.Format(time.RFC3339Nano), got, err, want)
		}
	}
}

func updateLicenceCopy(l *licentia.Licence, expires *time.Time) *licentia.Licence {
	c := *l
	c.ExpiresAt = expires
	return &c
}

// testSweepRace reinstates expired licences, several at once, while a sweep
// passes their expiries: whichever commits first, every licence ends
// counted as its state says, never in a row the sweep left behind. A
// reinstated licence is not among the rows the sweep selected, so only
// keeping the sweep apart from the change prevents that.
func testSweepRace(t *testing.T, s store.Store) {
	const rounds, perRound, reinstaters = 8, 16, 4
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	var all []*licentia.Licence
	for round := range rounds {
		start := base.Add(time.Duration(round) * time.Second)
		var ls []*licentia.Licence
		for i := range perRound {
			l := newLicence(o.ID, p.ID, fmt.Sprintf("c%d-%d@example.com", round, i), base)
			l.Status, l.ExpiresAt = licentia.StatusExpired, ptr(start.Add(time.Duration(i+1)*time.Millisecond))
			ls = append(ls, l)
		}
		createLicences(t, s, ls...)
		all = append(all, ls...)
		errs := make([]error, reinstaters+1)
		var wg sync.WaitGroup
		for r := range reinstaters {
			wg.Go(func() {
				for i := r; i < perRound && errs[r] == nil; i += reinstaters {
					errs[r] = reinstate(ctx, s, ls[i])
				}
			})
		}
		wg.Go(func() {
			errs[reinstaters] = s.InTx(ctx, func(tx store.Tx) error {
				_, err := tx.SweepLicences(ctx, start.Add(time.Second/2), 1000)
				return err
			})
		})
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: InTx() error = %v", round, err)
		}
	}
	for _, now := range []time.Time{base, base.Add(3*time.Second + 8*time.Millisecond), base.Add(time.Hour)} {
		want := BruteCounts(all, nil, o.ID, nil, base, now)
		if got, err := s.CountLicences(ctx, o.ID, nil, base, now); err != nil || *got != want {
			t.Errorf("CountLicences(now %s) = %+v, %v, want %+v", now.Format(time.RFC3339Nano), got, err, want)
		}
	}
}

// reinstate makes a licence stored-active again, in s and in l.
func reinstate(ctx context.Context, s store.Store, l *licentia.Licence) error {
	err := s.InTx(ctx, func(tx store.Tx) error {
		before, err := tx.LockLicence(ctx, l.OrgID, l.ID)
		if err != nil {
			return err
		}
		after := *before
		after.Status = licentia.StatusActive
		return tx.UpdateLicence(ctx, &after)
	})
	if err == nil {
		l.Status = licentia.StatusActive
	}
	return err
}

package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testLeaseSettings stores a product's max_concurrent, lease_ttl_seconds
// and max_borrow_hours and a licence's own max_concurrent, reads them
// back, and changes them.
func testLeaseSettings(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	p := newProduct(o.ID, "acme-float", "FLOT")
	p.MaxConcurrent, p.LeaseTTLSeconds, p.MaxBorrowHours = ptr[int64](5), 120, 48
	createProducts(t, s, p)
	got, err := s.Product(ctx, o.ID, p.ID)
	if err != nil {
		t.Fatalf("Product() error = %v", err)
	}
	if got.MaxConcurrent == nil || *got.MaxConcurrent != 5 || got.LeaseTTLSeconds != 120 || got.MaxBorrowHours != 48 {
		t.Errorf("Product() max_concurrent %v ttl %d borrow %d, want 5, 120, 48", got.MaxConcurrent, got.LeaseTTLSeconds, got.MaxBorrowHours)
	}
	got.MaxConcurrent, got.LeaseTTLSeconds, got.MaxBorrowHours = nil, 900, 0
	inTx(t, s, func(tx store.Tx) error { return tx.UpdateProduct(ctx, got) })
	if again, _ := s.Product(ctx, o.ID, p.ID); again.MaxConcurrent != nil || again.LeaseTTLSeconds != 900 || again.MaxBorrowHours != 0 {
		t.Errorf("after UpdateProduct: max_concurrent %v ttl %d borrow %d, want nil, 900, 0", again.MaxConcurrent, again.LeaseTTLSeconds, again.MaxBorrowHours)
	}

	own, follows := newLicence(o.ID, p.ID, "a@example.com", base), newLicence(o.ID, p.ID, "b@example.com", base)
	own.MaxConcurrent = ptr[int64](3)
	createLicences(t, s, own, follows)
	if l := readLicence(t, s, o.ID, own.ID); l.MaxConcurrent == nil || *l.MaxConcurrent != 3 {
		t.Errorf("licence max_concurrent = %v, want 3", l.MaxConcurrent)
	}
	if l := readLicence(t, s, o.ID, follows.ID); l.MaxConcurrent != nil {
		t.Errorf("licence following its product: max_concurrent = %v, want nil", *l.MaxConcurrent)
	}
	updateLicence(t, s, o.ID, own.ID, func(l *licentia.Licence) { l.MaxConcurrent = nil })
	if l := readLicence(t, s, o.ID, own.ID); l.MaxConcurrent != nil {
		t.Errorf("after clearing: max_concurrent = %v, want nil", *l.MaxConcurrent)
	}
}

// testLeases puts, counts, lists, renews, releases and sweeps leases: a
// lease past its end or of a freed activation holds no place at once, a
// renewal never shortens a lease, release answers false the second time,
// another organization's or machine's lease is never found, and the sweep
// deletes only leases holding no place.
func testLeases(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	l := newLicence(o.ID, p.ID, "a@example.com", base)
	createLicences(t, s, l)
	a1, a2, a3 := newActivation(l, "machine-1"), newActivation(l, "machine-2"), newActivation(l, "machine-3")
	createActivations(t, s, a1, a2, a3)
	lease := func(a *licentia.Activation, ends time.Duration) *store.FloatingLease {
		return &store.FloatingLease{ID: licentia.NewID(), OrgID: o.ID, LicenceID: l.ID, ActivationID: a.ID, MachineID: a.MachineID,
			TakenAt: base, ExpiresAt: base.Add(ends)}
	}
	l1, l2, l3 := lease(a1, 10*time.Minute), lease(a2, 5*time.Minute), lease(a3, time.Minute)
	inTx(t, s, func(tx store.Tx) error {
		for _, x := range []*store.FloatingLease{l1, l2, l3} {
			if err := tx.PutLease(ctx, x); err != nil {
				return err
			}
		}
		return nil
	})
	use, err := s.LeaseUseOf(ctx, o.ID, l.ID, base)
	if err != nil || use.InUse != 3 || use.EarliestEnd == nil || !use.EarliestEnd.Equal(l3.ExpiresAt) {
		t.Errorf("LeaseUseOf(base) = %+v, %v; want 3 in use, earliest %v", use, err, l3.ExpiresAt)
	}
	// The earliest lease ends: it stops counting at that very instant.
	use, _ = s.LeaseUseOf(ctx, o.ID, l.ID, l3.ExpiresAt)
	if use.InUse != 2 || use.EarliestEnd == nil || !use.EarliestEnd.Equal(l2.ExpiresAt) {
		t.Errorf("LeaseUseOf(at the first end) = %+v, want 2 in use, earliest %v", use, l2.ExpiresAt)
	}
	list, err := s.LeasesInUse(ctx, o.ID, l.ID, base, 10)
	if err != nil || len(list) != 3 || list[0].ID != l3.ID || list[2].ID != l1.ID || list[0].MachineID != "machine-3" {
		t.Errorf("LeasesInUse() = %+v, %v; want l3, l2, l1 with machine ids", list, err)
	}
	if got, err := s.LeaseOf(ctx, o.ID, a1.ID, base); err != nil || got.ID != l1.ID || !got.ExpiresAt.Equal(l1.ExpiresAt) {
		t.Errorf("LeaseOf(a1) = %+v, %v; want l1", got, err)
	}
	_, err = s.LeaseOf(ctx, licentia.NewID(), a1.ID, base)
	wantCode(t, "LeaseOf(another organization)", err, licentia.CodeLeaseNotFound)
	if n, _ := s.CountLeasesInUse(ctx, base); n != 3 {
		t.Errorf("CountLeasesInUse() = %d, want 3", n)
	}

	// Renewing: later end taken, earlier end ignored, the licence read
	// with it; wrong machine, organization or product, an ended lease, or
	// a licence that may hold none renews nothing.
	renew := func(name, productID, licenceID, machine, leaseID string, now, until time.Time) *store.FloatingLease {
		t.Helper()
		got, renewed, err := s.RenewLease(ctx, productID, licenceID, machine, leaseID, now, until)
		if err != nil {
			t.Fatalf("RenewLease(%s) error = %v", name, err)
		}
		if got.ID != licenceID {
			t.Errorf("RenewLease(%s) read licence %s, want %s", name, got.ID, licenceID)
		}
		return renewed
	}
	renewed := renew("later", p.ID, l.ID, "machine-2", l2.ID, base, base.Add(20*time.Minute))
	if renewed == nil || !renewed.ExpiresAt.Equal(base.Add(20*time.Minute)) || renewed.ID != l2.ID || renewed.ActivationID != a2.ID ||
		renewed.OrgID != o.ID || renewed.LicenceID != l.ID || renewed.MachineID != "machine-2" || !renewed.TakenAt.Equal(base) {
		t.Errorf("RenewLease() = %+v, want l2 ending at +20m", renewed)
	}
	renewed = renew("earlier", p.ID, l.ID, "machine-2", l2.ID, base, base.Add(time.Minute))
	if renewed == nil || !renewed.ExpiresAt.Equal(base.Add(20*time.Minute)) {
		t.Errorf("RenewLease(earlier end) = %+v, want the end kept at +20m", renewed)
	}
	for _, c := range []struct {
		name                      string
		product, machine, leaseID string
		now                       time.Time
	}{
		{"another machine", p.ID, "machine-1", l2.ID, base},
		{"another product", licentia.NewID(), "machine-2", l2.ID, base},
		{"not an id", p.ID, "machine-2", "lease", base},
		{"ended", p.ID, "machine-3", l3.ID, l3.ExpiresAt},
	} {
		if got := renew(c.name, c.product, l.ID, c.machine, c.leaseID, c.now, c.now.Add(time.Hour)); got != nil {
			t.Errorf("RenewLease(%s) = %+v, want nothing renewed", c.name, got)
		}
	}
	_, _, err = s.RenewLease(ctx, p.ID, licentia.NewID(), "machine-2", l2.ID, base, base.Add(time.Hour))
	wantCode(t, "RenewLease(another licence)", err, licentia.CodeLicenceNotFound)
	_, _, err = s.RenewLease(ctx, p.ID, "licence", "machine-2", l2.ID, base, base.Add(time.Hour))
	wantCode(t, "RenewLease(not a licence id)", err, licentia.CodeLicenceNotFound)
	for _, refuse := range []struct {
		name   string
		change func(*licentia.Licence)
	}{
		{"revoked", func(l *licentia.Licence) { l.Status = licentia.StatusRevoked }},
		{"expired", func(l *licentia.Licence) { l.ExpiresAt = &base }},
	} {
		updateLicence(t, s, o.ID, l.ID, refuse.change)
		if got := renew(refuse.name, p.ID, l.ID, "machine-2", l2.ID, base, base.Add(time.Hour)); got != nil {
			t.Errorf("RenewLease(%s licence) = %+v, want nothing renewed", refuse.name, got)
		}
		updateLicence(t, s, o.ID, l.ID, func(l *licentia.Licence) { l.Status, l.ExpiresAt = licentia.StatusActive, nil })
	}
	if got, _ := s.LeaseOf(ctx, o.ID, a2.ID, base); got == nil || !got.ExpiresAt.Equal(base.Add(20*time.Minute)) {
		t.Errorf("after renewals that renewed nothing, l2 = %+v, want its end at +20m", got)
	}

	// Releasing: once true, then false; another machine's never.
	release := func(machine, id string) bool {
		var ok bool
		inTx(t, s, func(tx store.Tx) error {
			ok, err = tx.ReleaseLease(ctx, o.ID, l.ID, machine, id, base)
			return err
		})
		return ok
	}
	if release("machine-2", l1.ID) {
		t.Errorf("ReleaseLease(another machine's lease) = true")
	}
	if !release("machine-1", l1.ID) || release("machine-1", l1.ID) {
		t.Errorf("ReleaseLease() twice: want true, then false")
	}

	// A freed activation's lease holds no place; the sweep deletes it and
	// the ended one, and leaves the one in use.
	deactivate(t, s, o.ID, a2.ID, base.Add(time.Second))
	if use, _ := s.LeaseUseOf(ctx, o.ID, l.ID, base.Add(time.Second)); use.InUse != 1 {
		t.Errorf("LeaseUseOf(after freeing machine-2) = %d in use, want 1 (machine-3)", use.InUse)
	}
	var swept int64
	inTx(t, s, func(tx store.Tx) error { swept, err = tx.SweepLeases(ctx, l3.ExpiresAt, 100); return err })
	if swept != 2 {
		t.Errorf("SweepLeases() = %d, want 2 (ended and freed)", swept)
	}
	// Putting a lease for an activation that held one replaces it.
	a4 := newActivation(l, "machine-4")
	createActivations(t, s, a4)
	first, second := lease(a4, time.Hour), lease(a4, 2*time.Hour)
	inTx(t, s, func(tx store.Tx) error { return tx.PutLease(ctx, first) })
	inTx(t, s, func(tx store.Tx) error { return tx.PutLease(ctx, second) })
	if got, err := s.LeaseOf(ctx, o.ID, a4.ID, base); err != nil || got.ID != second.ID {
		t.Errorf("LeaseOf(after a second PutLease) = %+v, %v; want the second", got, err)
	}
}

// testLeaseRace: machines racing for the last place of a licence, each
// holding the licence while it counts, take exactly as many places as
// the limit.
func testLeaseRace(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	l := newLicence(o.ID, p.ID, "a@example.com", base)
	createLicences(t, s, l)
	const racers, limit = 8, 3
	acts := make([]*licentia.Activation, racers)
	for i := range acts {
		acts[i] = newActivation(l, "machine-"+string(rune('a'+i)))
	}
	createActivations(t, s, acts...)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for _, a := range acts {
		wg.Go(func() {
			taken := false
			err := s.InTx(ctx, func(tx store.Tx) error {
				taken = false
				if _, err := tx.LockLicence(ctx, o.ID, l.ID); err != nil {
					return err
				}
				use, err := tx.LeaseUseOf(ctx, o.ID, l.ID, base)
				if err != nil || use.InUse >= limit {
					return err
				}
				taken = true
				return tx.PutLease(ctx, &store.FloatingLease{ID: licentia.NewID(), OrgID: o.ID, LicenceID: l.ID,
					ActivationID: a.ID, TakenAt: base, ExpiresAt: base.Add(time.Hour)})
			})
			if err != nil {
				t.Errorf("take lease: %v", err)
			}
			mu.Lock()
			if taken {
				won++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if use, _ := s.LeaseUseOf(ctx, o.ID, l.ID, base); won != limit || use.InUse != limit {
		t.Errorf("racers won %d places, %d in use; want %d", won, use.InUse, limit)
	}
}

package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// hashOf is a component hash made of one repeated hex digit.
func hashOf(digit string) string { return strings.Repeat(digit, 64) }

// testMachineSettings stores a product's machine_match and
// transfers_per_30_days and a licence's own transfers_per_30_days, reads
// them back, and changes them.
func testMachineSettings(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	p := newProduct(o.ID, "acme-app", "MACH")
	p.MachineMatch, p.TransfersPer30Days = licentia.MatchMost, 4
	createProducts(t, s, p)
	got, err := s.Product(ctx, o.ID, p.ID)
	if err != nil {
		t.Fatalf("Product() error = %v", err)
	}
	if got.MachineMatch != licentia.MatchMost || got.TransfersPer30Days != 4 {
		t.Errorf("Product() machine_match %q transfers %d, want most and 4", got.MachineMatch, got.TransfersPer30Days)
	}
	got.MachineMatch, got.TransfersPer30Days = licentia.MatchAny, 0
	inTx(t, s, func(tx store.Tx) error { return tx.UpdateProduct(ctx, got) })
	if again, _ := s.Product(ctx, o.ID, p.ID); again.MachineMatch != licentia.MatchAny || again.TransfersPer30Days != 0 {
		t.Errorf("after UpdateProduct: machine_match %q transfers %d, want any and 0", again.MachineMatch, again.TransfersPer30Days)
	}

	own, follows := newLicence(o.ID, p.ID, "a@example.com", base), newLicence(o.ID, p.ID, "b@example.com", base)
	own.TransfersPer30Days = ptr[int64](7)
	createLicences(t, s, own, follows)
	if l := readLicence(t, s, o.ID, own.ID); l.TransfersPer30Days == nil || *l.TransfersPer30Days != 7 {
		t.Errorf("licence transfers_per_30_days = %v, want 7", l.TransfersPer30Days)
	}
	if l := readLicence(t, s, o.ID, follows.ID); l.TransfersPer30Days != nil {
		t.Errorf("licence following its product: transfers_per_30_days = %v, want nil", *l.TransfersPer30Days)
	}
	updateLicence(t, s, o.ID, own.ID, func(l *licentia.Licence) { l.TransfersPer30Days = nil })
	updateLicence(t, s, o.ID, follows.ID, func(l *licentia.Licence) { l.TransfersPer30Days = ptr[int64](0) })
	if l := readLicence(t, s, o.ID, own.ID); l.TransfersPer30Days != nil {
		t.Errorf("after clearing: transfers_per_30_days = %v, want nil", *l.TransfersPer30Days)
	}
	if l := readLicence(t, s, o.ID, follows.ID); l.TransfersPer30Days == nil || *l.TransfersPer30Days != 0 {
		t.Errorf("after setting 0: transfers_per_30_days = %v, want 0", l.TransfersPer30Days)
	}
}

// testComponents stores an activation's components, lists live
// activations least recently seen first, rebinds one to a new machine id
// with new components through TouchActivation, counts transfers in their
// window, and anonymising a licence forgets the hashes.
func testComponents(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	l := newLicence(o.ID, p.ID, "a@example.com", base)
	createLicences(t, s, l)
	with := newActivation(l, "machine-1")
	with.Components = map[string]string{"board": hashOf("a"), "disk": hashOf("b"), "os_install": hashOf("c")}
	with.LastSeenAt = base.Add(time.Hour)
	without := newActivation(l, "machine-2")
	freed := newActivation(l, "machine-3")
	createActivations(t, s, with, without, freed)
	deactivate(t, s, o.ID, freed.ID, base.Add(time.Minute))

	live, err := s.LiveActivations(ctx, o.ID, l.ID)
	if err != nil {
		t.Fatalf("LiveActivations() error = %v", err)
	}
	want := []licentia.Activation{storedActivation(without), storedActivation(with)}
	if diff := cmp.Diff(want, live); diff != "" {
		t.Errorf("LiveActivations() mismatch (-want +got):\n%s", diff)
	}
	if other, err := s.LiveActivations(ctx, licentia.NewID(), l.ID); err != nil || len(other) != 0 {
		t.Errorf("LiveActivations(another organization) = %v, %v; want none", other, err)
	}

	rebound := storedActivation(with)
	rebound.MachineID, rebound.LastSeenAt = "machine-1-new", base.Add(2*time.Hour)
	rebound.Components = map[string]string{"board": hashOf("a"), "disk": hashOf("d")}
	inTx(t, s, func(tx store.Tx) error { return tx.TouchActivation(ctx, &rebound) })
	got, err := s.LiveActivation(ctx, o.ID, l.ID, "machine-1-new")
	if err != nil {
		t.Fatalf("LiveActivation(rebound machine) error = %v", err)
	}
	if diff := cmp.Diff(&rebound, got); diff != "" {
		t.Errorf("rebound activation mismatch (-want +got):\n%s", diff)
	}
	_, err = s.LiveActivation(ctx, o.ID, l.ID, "machine-1")
	wantCode(t, "LiveActivation(old machine id)", err, licentia.CodeNotFound)
	if n := readLicence(t, s, o.ID, l.ID).LiveActivations; n != 2 {
		t.Errorf("live_activations after rebinding = %d, want 2", n)
	}

	for _, at := range []time.Time{base, base.Add(10 * 24 * time.Hour), base.Add(20 * 24 * time.Hour)} {
		inTx(t, s, func(tx store.Tx) error {
			return tx.RecordTransfer(ctx, &store.Transfer{ID: licentia.NewID(), OrgID: o.ID, LicenceID: l.ID, ActivationID: freed.ID, At: at})
		})
	}
	for _, c := range []struct {
		since time.Time
		want  int64
	}{{base, 3}, {base.Add(time.Millisecond), 2}, {base.Add(20 * 24 * time.Hour), 1}, {base.Add(21 * 24 * time.Hour), 0}} {
		if n, err := s.TransfersSince(ctx, o.ID, l.ID, c.since); err != nil || n != c.want {
			t.Errorf("TransfersSince(%v) = %d, %v; want %d", c.since, n, err, c.want)
		}
	}
	if n, err := s.TransfersSince(ctx, licentia.NewID(), l.ID, base); err != nil || n != 0 {
		t.Errorf("TransfersSince(another organization) = %d, %v; want 0", n, err)
	}

	inTx(t, s, func(tx store.Tx) error { return tx.AnonymiseActivations(ctx, o.ID, l.ID, base.Add(3*time.Hour)) })
	all, err := s.Activations(ctx, o.ID, l.ID)
	if err != nil {
		t.Fatalf("Activations() error = %v", err)
	}
	for _, a := range all {
		if len(a.Components) != 0 {
			t.Errorf("anonymised activation %s keeps components %v", a.ID, a.Components)
		}
	}
}

package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// storedActivation returns a as a store reads it back.
func storedActivation(a *licentia.Activation) licentia.Activation {
	c := *a
	c.ActivatedAt, c.LastSeenAt, c.DeactivatedAt = atMillis(c.ActivatedAt), atMillis(c.LastSeenAt), atMillisPtr(c.DeactivatedAt)
	return c
}

// deactivate runs DeactivateActivation in its own transaction.
func deactivate(t *testing.T, s store.Store, orgID, id string, at time.Time) (*licentia.Activation, bool) {
	t.Helper()
	var a *licentia.Activation
	var changed bool
	inTx(t, s, func(tx store.Tx) error {
		var err error
		a, changed, err = tx.DeactivateActivation(t.Context(), orgID, id, at)
		return err
	})
	return a, changed
}

// liveMachines reads the live_machines count of an organization at base.
func liveMachines(t *testing.T, r store.Reader, orgID string) int64 {
	t.Helper()
	c, err := r.CountLicences(t.Context(), orgID, nil, base, base)
	if err != nil {
		t.Fatalf("CountLicences() error = %v", err)
	}
	return c.LiveMachines
}

// testActivations covers a licence's machines: live ones listed first, a
// second live activation of a machine refused, freeing once, and a freed
// machine coming back as a new activation.
func testActivations(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	l := newLicence(o.ID, p.ID, "a@example.com", base)
	// Every field the status route reads is set: LicenceWithSeat reads them.
	putFeature(t, s, p, "export", "Export", base)
	putFeature(t, s, p, "sync", "Sync", base)
	l.ExpiresAt, l.TrialEndsAt = ptr(base.Add(365*24*time.Hour)), ptr(base.Add(14*24*time.Hour))
	l.Features = []licentia.FeatureGrant{{Code: "export"}, {Code: "sync", ExpiresAt: ptr(base.Add(30 * 24 * time.Hour))}}
	createLicences(t, s, l)
	zone := time.FixedZone("UTC+1", 3600)
	first := newActivation(l, "machine-1")
	first.ActivatedAt, first.LastSeenAt = time.Date(2026, 3, 1, 13, 0, 0, 123_456_789, zone), base.Add(time.Minute)
	second := newActivation(l, "Machine-1") // machine ids are case-sensitive
	second.ID, second.ActivatedAt = seqID(2), base.Add(time.Second)
	third := newActivation(l, "machine.3:x_y-z")
	third.ID, third.ActivatedAt = seqID(1), base.Add(time.Second)
	createActivations(t, s, first, second, third)

	err := s.InTx(ctx, func(tx store.Tx) error { return tx.CreateActivation(ctx, newActivation(l, "machine-1")) })
	wantCode(t, "CreateActivation(live machine)", err, licentia.CodeConflict)
	if got := readLicence(t, s, o.ID, l.ID).LiveActivations; got != 3 {
		t.Errorf("LiveActivations = %d, want 3", got)
	}

	freedAt := base.Add(time.Hour + 999_999)
	a, changed := deactivate(t, s, o.ID, first.ID, freedAt)
	wantFirst := storedActivation(first)
	wantFirst.DeactivatedAt = ptr(atMillis(freedAt))
	if diff := cmp.Diff(&wantFirst, a); diff != "" || !changed {
		t.Errorf("DeactivateActivation() changed = %v, mismatch (-want +got):\n%s", changed, diff)
	}
	a, changed = deactivate(t, s, o.ID, first.ID, freedAt.Add(time.Hour))
	if diff := cmp.Diff(&wantFirst, a); diff != "" || changed {
		t.Errorf("DeactivateActivation(again) changed = %v, want false, mismatch (-want +got):\n%s", changed, diff)
	}
	// The freed machine comes back: a new activation, live.
	again := newActivation(l, "machine-1")
	again.ActivatedAt = base.Add(2 * time.Hour)
	createActivations(t, s, again)

	want := []licentia.Activation{storedActivation(third), storedActivation(second), storedActivation(again), wantFirst}
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.Activations(ctx, o.ID, l.ID)
		if diff := cmp.Diff(want, got); diff != "" || err != nil {
			t.Errorf("Activations() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		for _, a := range got {
			if a.ActivatedAt.Location() != time.UTC || a.LastSeenAt.Location() != time.UTC {
				t.Errorf("Activation %s times not in UTC", a.ID)
			}
		}
		live, err := r.LiveActivation(ctx, o.ID, l.ID, "machine-1")
		if err != nil || live.ID != again.ID {
			t.Errorf("LiveActivation(machine-1) = %+v, %v, want %s", live, err, again.ID)
		}
		wantLicence := store.StatusPart(readLicence(t, s, o.ID, l.ID))
		for _, tt := range []struct {
			machine string
			want    *store.Seat
		}{
			{"machine-1", &store.Seat{ActivationID: again.ID, LastSeenAt: atMillis(again.LastSeenAt)}},
			{"Machine-1", &store.Seat{ActivationID: second.ID, LastSeenAt: atMillis(second.LastSeenAt)}},
			{"machine-2", nil},
			{"", nil},
		} {
			gotLicence, seat, err := r.LicenceWithSeat(ctx, l.ID, tt.machine)
			if err != nil || cmp.Diff(wantLicence, gotLicence) != "" || cmp.Diff(tt.want, seat) != "" {
				t.Errorf("LicenceWithSeat(%q) = %+v, %+v, %v; want the licence's status part %+v and seat %+v", tt.machine, gotLicence, seat, err, wantLicence, tt.want)
			}
			if seat != nil && seat.LastSeenAt.Location() != time.UTC {
				t.Errorf("LicenceWithSeat(%q) last_seen_at not in UTC", tt.machine)
			}
		}
		_, _, err = r.LicenceWithSeat(ctx, licentia.NewID(), "machine-1")
		wantCode(t, "LicenceWithSeat(unknown licence)", err, licentia.CodeLicenceNotFound)
		got1, err := r.Activation(ctx, o.ID, first.ID)
		if diff := cmp.Diff(&wantFirst, got1); diff != "" || err != nil {
			t.Errorf("Activation() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
	})
	if got := readLicence(t, s, o.ID, l.ID).LiveActivations; got != 3 {
		t.Errorf("LiveActivations = %d, want 3", got)
	}
	if got := liveMachines(t, s, o.ID); got != 3 {
		t.Errorf("live machines = %d, want 3", got)
	}

	touched := *again
	touched.LastSeenAt, touched.Label, touched.OS, touched.AppVersion = base.Add(3*time.Hour), "Desk", "macos", "2.0.0"
	touched.ActivatedAt = base // not written
	inTx(t, s, func(tx store.Tx) error { return tx.TouchActivation(ctx, &touched) })
	wantTouched := storedActivation(&touched)
	wantTouched.ActivatedAt = atMillis(again.ActivatedAt)
	if got, err := s.Activation(ctx, o.ID, again.ID); err != nil || !cmp.Equal(&wantTouched, got) {
		t.Errorf("Activation() after TouchActivation = %+v, %v, want %+v", got, err, wantTouched)
	}
	freed := *first
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.TouchActivation(ctx, &freed) })
	wantCode(t, "TouchActivation(freed)", err, licentia.CodeNotFound)
}

// testAnonymiseActivations erases every machine of a licence and frees the
// live ones, which leave the live counts; another licence keeps its own.
func testAnonymiseActivations(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	l := newLicence(o.ID, p.ID, "a@example.com", base)
	kept := newLicence(o.ID, p.ID, "b@example.com", base)
	createLicences(t, s, l, kept)
	live1, live2, freed := newActivation(l, "machine-1"), newActivation(l, "machine-2"), newActivation(l, "machine-3")
	freed.DeactivatedAt = ptr(base.Add(-time.Hour))
	other := newActivation(kept, "machine-1")
	createActivations(t, s, live1, live2, freed, other)
	if got := liveMachines(t, s, o.ID); got != 3 {
		t.Fatalf("live machines = %d, want 3", got)
	}

	at := base.Add(time.Hour)
	inTx(t, s, func(tx store.Tx) error { return tx.AnonymiseActivations(ctx, o.ID, l.ID, at) })
	got, err := s.Activations(ctx, o.ID, l.ID)
	if err != nil || len(got) != 3 {
		t.Fatalf("Activations() = %+v, %v, want 3", got, err)
	}
	for _, a := range got {
		wantFreed := atMillis(at)
		if a.ID == freed.ID {
			wantFreed = atMillis(*freed.DeactivatedAt)
		}
		if a.MachineID != "anonymised-"+a.ID || a.Label != "anonymised" || a.OS != "anonymised" ||
			a.AppVersion != "anonymised" || a.DeactivatedAt == nil || !a.DeactivatedAt.Equal(wantFreed) {
			t.Errorf("activation after anonymising = %+v, want erased, freed at %s", a, wantFreed)
		}
	}
	if got := readLicence(t, s, o.ID, l.ID).LiveActivations; got != 0 {
		t.Errorf("LiveActivations after anonymising = %d, want 0", got)
	}
	if got := liveMachines(t, s, o.ID); got != 1 {
		t.Errorf("live machines after anonymising = %d, want 1 (the other licence's)", got)
	}
	if a, err := s.Activation(ctx, o.ID, other.ID); err != nil || a.MachineID != "machine-1" || !a.IsLive() {
		t.Errorf("other licence's activation = %+v, %v, want unchanged", a, err)
	}
	// The machine ids are free again: the licence's own machine-1 may come
	// back. Then the whole of anonymising, as the operation does it: the
	// licence is revoked in the same transaction, UpdateLicence given the
	// licence as LockLicence read it, machines and all.
	createActivations(t, s, newActivation(l, "machine-1"), newActivation(l, "machine-4"))
	inTx(t, s, func(tx store.Tx) error {
		before, err := tx.LockLicence(ctx, o.ID, l.ID)
		if err != nil {
			return err
		}
		if err := tx.AnonymiseActivations(ctx, o.ID, l.ID, at); err != nil {
			return err
		}
		after := *before
		after.Status, after.StatusChangedAt, after.AnonymisedAt = licentia.StatusRevoked, &at, &at
		return tx.UpdateLicence(ctx, &after)
	})
	got1 := readLicence(t, s, o.ID, l.ID)
	want := store.LicenceCounts{All: 2, Active: 1, Revoked: 1, Perpetual: 2, Admin: 2, LiveMachines: 1, IssuedSince: 2, RevokedSince: 1}
	if c, err := s.CountLicences(ctx, o.ID, nil, base, base); err != nil || *c != want || got1.LiveActivations != 0 {
		t.Errorf("after anonymising and revoking: counts %+v, %v, live activations %d; want %+v, 0", c, err, got1.LiveActivations, want)
	}
}

// testEvents writes events and lists and deletes them by time.
func testEvents(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	other := createOrganization(t, s, "other")
	l := newLicence(o.ID, p.ID, "a@example.com", base)
	createLicences(t, s, l)
	event := func(orgID string, at time.Time, body string) *licentia.Event {
		return &licentia.Event{ID: licentia.NewID(), OrgID: orgID, Type: licentia.EventActivationCreated, LicenceID: &l.ID, At: at, Body: []byte(body)}
	}
	// Written out of time order; two share an instant, so the order written
	// decides between them.
	late := event(o.ID, base.Add(time.Hour), `{"n":3}`)
	same1 := event(o.ID, base, `{"type":"licence.issued", "data": {"email":"Zoë"} }`)
	same1.ID, same1.Type = seqID(2), licentia.EventLicenceIssued
	same2 := event(o.ID, base, `{"n":2}`)
	same2.ID, same2.LicenceID = seqID(1), nil
	early := event(o.ID, base.Add(-time.Hour+time.Millisecond/2), `{"n":0}`)
	inTx(t, s, func(tx store.Tx) error {
		for _, e := range []*licentia.Event{late, same1, same2, early, event(other.ID, base, `{}`)} {
			if err := tx.InsertEvent(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	storedEvent := func(e *licentia.Event) licentia.Event { c := *e; c.At = atMillis(c.At); return c }
	want := []licentia.Event{storedEvent(early), storedEvent(same1), storedEvent(same2), storedEvent(late)}
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.OrganizationEvents(ctx, o.ID)
		if diff := cmp.Diff(want, got); diff != "" || err != nil {
			t.Errorf("OrganizationEvents() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
	})
	// Events before the instant go; one exactly at it stays.
	var n int64
	inTx(t, s, func(tx store.Tx) error {
		var err error
		n, err = tx.DeleteEventsBefore(ctx, base)
		return err
	})
	if n != 1 {
		t.Errorf("DeleteEventsBefore(base) = %d, want 1", n)
	}
	got, err := s.OrganizationEvents(ctx, o.ID)
	if diff := cmp.Diff(want[1:], got); diff != "" || err != nil {
		t.Errorf("OrganizationEvents() after delete error = %v, mismatch (-want +got):\n%s", err, diff)
	}
	inTx(t, s, func(tx store.Tx) error {
		var err error
		n, err = tx.DeleteEventsBefore(ctx, base.Add(time.Millisecond))
		return err
	})
	if n != 3 {
		t.Errorf("DeleteEventsBefore(base+1ms) = %d, want 3 (both organizations)", n)
	}
}

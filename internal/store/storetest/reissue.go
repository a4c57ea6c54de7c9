package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// reissue replaces old with a copy under a new id, as a reissue does, in
// one transaction: the old licence revoked and naming its replacement, the
// new one naming it and sharing its external_ref, then the machines and
// order moved. It returns the new licence and how many activations moved.
func reissue(t *testing.T, s store.Store, old *licentia.Licence, at time.Time) (*licentia.Licence, int64) {
	t.Helper()
	var fresh licentia.Licence
	var moved int64
	inTx(t, s, func(tx store.Tx) error {
		before, err := tx.LockLicence(t.Context(), old.OrgID, old.ID)
		if err != nil {
			return err
		}
		fresh = *before
		fresh.ID, fresh.Replaces, fresh.IssuedAt, fresh.CreatedAt, fresh.UpdatedAt = licentia.NewID(), &before.ID, at, at, at
		fresh.LiveActivations = 0
		after := *before
		after.Status, after.StatusChangedAt, after.ReplacedBy, after.UpdatedAt = licentia.StatusRevoked, &at, &fresh.ID, at
		moved, err = tx.ReplaceLicence(t.Context(), &after, &fresh)
		return err
	})
	return &fresh, moved
}

// testReplaceLicence: a reissue's writes. The live activations move with
// their ids, freed ones stay; the order item follows, so the order's
// refund finds the new licence; live_activations and the counters equal a
// recount; the old licence and its replacement share the external_ref,
// which stays unique among licences not replaced, and is found on the one
// in use. Another organization's licence, or a missing one, answers
// licence_not_found, and a taken id conflict, with nothing written.
func testReplaceLicence(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	other, theirs := licenceSetup(t, s, "other")
	old := providerLicence(o.ID, p.ID, "buyer@example.com", base, licentia.ProviderRefs{OrderID: ptr("pi_1")})
	old.ExternalRef = ptr("sale-1")
	stranger := newLicence(other.ID, theirs.ID, "b@example.com", base)
	createLicences(t, s, old, stranger)
	inTx(t, s, func(tx store.Tx) error { return tx.CreateProviderItem(ctx, providerItem(old, "pi_1", "price_a")) })
	m1, m2, gone := newActivation(old, "m1"), newActivation(old, "m2"), newActivation(old, "m3")
	createActivations(t, s, m1, m2, gone)
	deactivate(t, s, o.ID, gone.ID, base.Add(time.Minute))

	before, err := s.CountLicences(ctx, o.ID, nil, base, base)
	if err != nil {
		t.Fatalf("CountLicences() error = %v", err)
	}
	for _, tt := range []struct {
		name     string
		org, id  string
		freshID  string
		wantCode licentia.Code
	}{
		{"another organization's licence", other.ID, old.ID, licentia.NewID(), licentia.CodeLicenceNotFound},
		{"missing licence", o.ID, licentia.NewID(), licentia.NewID(), licentia.CodeLicenceNotFound},
		{"taken id", o.ID, old.ID, stranger.ID, licentia.CodeConflict},
	} {
		err := s.InTx(ctx, func(tx store.Tx) error {
			stale, fresh := *old, *old
			stale.OrgID, stale.ID, stale.Status = tt.org, tt.id, licentia.StatusRevoked
			fresh.OrgID, fresh.ID, fresh.Replaces, fresh.ExternalRef = tt.org, tt.freshID, &old.ID, nil
			stale.ReplacedBy = &fresh.ID
			_, err := tx.ReplaceLicence(ctx, &stale, &fresh)
			wantCode(t, "ReplaceLicence("+tt.name+")", err, tt.wantCode)
			return errRollback
		})
		if err != errRollback {
			t.Errorf("%s: InTx() error = %v", tt.name, err)
		}
	}
	if got, err := s.CountLicences(ctx, o.ID, nil, base, base); err != nil || *got != *before {
		t.Errorf("CountLicences() after refusals = %+v, %v, want %+v", got, err, before)
	}

	at := base.Add(time.Hour)
	fresh, moved := reissue(t, s, old, at)
	if moved != 2 {
		t.Errorf("ReplaceLicence() moved %d, want 2 (the live machines)", moved)
	}
	acts, err := s.Activations(ctx, o.ID, fresh.ID)
	if err != nil {
		t.Fatalf("Activations() error = %v", err)
	}
	var ids []string
	for _, a := range acts {
		ids = append(ids, a.ID)
	}
	if want := []string{m1.ID, m2.ID}; !slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(want))) {
		t.Errorf("new licence's activations = %v, want %v with their ids", ids, want)
	}
	if left, err := s.Activations(ctx, o.ID, old.ID); err != nil || len(left) != 1 || left[0].ID != gone.ID {
		t.Errorf("old licence's activations = %+v, %v, want only the freed %s", left, err, gone.ID)
	}
	if _, err := s.LiveActivation(ctx, o.ID, fresh.ID, "m1"); err != nil {
		t.Errorf("LiveActivation(new licence, m1) error = %v, want the moved activation", err)
	}
	gotOld, gotNew := readLicence(t, s, o.ID, old.ID), readLicence(t, s, o.ID, fresh.ID)
	if gotOld.LiveActivations != 0 || gotNew.LiveActivations != 2 {
		t.Errorf("live_activations = %d old, %d new, want 0 and 2", gotOld.LiveActivations, gotNew.LiveActivations)
	}
	if gotOld.ReplacedBy == nil || *gotOld.ReplacedBy != fresh.ID || gotNew.Replaces == nil || *gotNew.Replaces != old.ID {
		t.Errorf("replaced_by %v, replaces %v, want %s and %s", gotOld.ReplacedBy, gotNew.Replaces, fresh.ID, old.ID)
	}
	wantRecount(t, s, o.ID, at)

	inTx(t, s, func(tx store.Tx) error {
		its, err := tx.ProviderItemsByOrder(ctx, o.ID, *old.IntegrationID, "pi_1")
		if err != nil {
			return err
		}
		if len(its) != 1 || its[0].LicenceID != fresh.ID {
			t.Errorf("ProviderItemsByOrder() = %+v, want the item on %s", its, fresh.ID)
		}
		return nil
	})
	byRef, err := s.LicenceByExternalRef(ctx, o.ID, p.ID, "sale-1")
	if err != nil || byRef.ID != fresh.ID {
		t.Errorf("LicenceByExternalRef() = %v, %v, want the replacement %s", byRef, err, fresh.ID)
	}
	found, err := s.FindLicences(ctx, o.ID, store.LicenceFilter{ProductID: &p.ID, ExternalRef: ptr("sale-1"), Limit: 10}, at)
	if err != nil || len(found) != 2 {
		t.Errorf("FindLicences(external_ref) = %d licences, %v, want both", len(found), err)
	}
	third := newLicence(o.ID, p.ID, "c@example.com", at)
	third.ExternalRef = ptr("sale-1")
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.CreateLicence(ctx, third) })
	wantCode(t, "CreateLicence(ref of the licence in use)", err, licentia.CodeConflict)

	// Reissued again: three licences share the reference, one in use.
	newest, moved := reissue(t, s, fresh, at.Add(time.Hour))
	if moved != 2 {
		t.Errorf("second ReplaceLicence() moved %d, want 2", moved)
	}
	if byRef, err := s.LicenceByExternalRef(ctx, o.ID, p.ID, "sale-1"); err != nil || byRef.ID != newest.ID {
		t.Errorf("LicenceByExternalRef() = %v, %v, want %s", byRef, err, newest.ID)
	}
	wantRecount(t, s, o.ID, at.Add(time.Hour))
}

// wantRecount checks an organization's counts, and each licence's
// live_activations, against a recount of its licences and activation rows.
func wantRecount(t *testing.T, s store.Store, orgID string, now time.Time) {
	t.Helper()
	var ls []*licentia.Licence
	live := map[string]int64{}
	for _, c := range allLicences(t, s, 100) {
		if c.Licence.OrgID != orgID {
			continue
		}
		l := c.Licence
		ls = append(ls, &l)
		live[l.ID] = c.LiveRows
		if l.LiveActivations != c.LiveRows {
			t.Errorf("licence %s live_activations = %d, want %d live rows", l.ID, l.LiveActivations, c.LiveRows)
		}
	}
	want := BruteCounts(ls, live, orgID, nil, base, now)
	got, err := s.CountLicences(t.Context(), orgID, nil, base, now)
	if err != nil {
		t.Fatalf("CountLicences() error = %v", err)
	}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("CountLicences() mismatch with a recount (-want +got):\n%s", diff)
	}
}

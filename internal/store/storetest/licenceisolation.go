package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// newActivation returns a live activation of machine on l.
func newActivation(l *licentia.Licence, machine string) *licentia.Activation {
	return &licentia.Activation{
		ID: licentia.NewID(), OrgID: l.OrgID, LicenceID: l.ID, MachineID: machine, Label: "Laptop", OS: "linux",
		AppVersion: "1.2.3", ActivatedAt: base, LastSeenAt: base,
	}
}

// createActivations stores activations in one transaction.
func createActivations(t *testing.T, s store.Store, as ...*licentia.Activation) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, a := range as {
			if err := tx.CreateActivation(t.Context(), a); err != nil {
				return err
			}
		}
		return nil
	})
}

// testLicenceIsolation asks, as one organization, for another's licence and
// activation by id through every method that takes an organization: each
// answers exactly as for an id that does not exist, and changes nothing.
func testLicenceIsolation(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine, myProduct := licenceSetup(t, s, "mine")
	other, theirProduct := licenceSetup(t, s, "other")
	myLicence := newLicence(mine.ID, myProduct.ID, "same@example.com", base)
	theirLicence := newLicence(other.ID, theirProduct.ID, "same@example.com", base)
	theirLicence.ExternalRef = ptr("their-ref")
	createLicences(t, s, myLicence, theirLicence)
	theirActivation := newActivation(theirLicence, "machine-1")
	createActivations(t, s, theirActivation)
	theirAudit := newAuditEntry(other.ID, `{"theirs":true}`)
	theirAudit.LicenceID = &theirLicence.ID
	appendAudit(t, s, theirAudit)
	theirEvent := &licentia.Event{ID: licentia.NewID(), OrgID: other.ID, Type: licentia.EventLicenceIssued,
		LicenceID: &theirLicence.ID, At: base, Body: []byte(`{}`)}
	inTx(t, s, func(tx store.Tx) error { return tx.InsertEvent(ctx, theirEvent) })
	missing := licentia.NewID()

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		_, want := r.Licence(ctx, mine.ID, missing)
		wantCode(t, "Licence(missing)", want, licentia.CodeLicenceNotFound)
		_, err := r.Licence(ctx, mine.ID, theirLicence.ID)
		wantSame(t, "Licence(theirs)", err, want)
		_, want = r.LicenceByExternalRef(ctx, mine.ID, theirProduct.ID, "missing-ref")
		_, err = r.LicenceByExternalRef(ctx, mine.ID, theirProduct.ID, "their-ref")
		wantSame(t, "LicenceByExternalRef(theirs)", err, want)
		_, want = r.Activation(ctx, mine.ID, missing)
		wantCode(t, "Activation(missing)", want, licentia.CodeNotFound)
		_, err = r.Activation(ctx, mine.ID, theirActivation.ID)
		wantSame(t, "Activation(theirs)", err, want)
		_, want = r.LiveActivation(ctx, mine.ID, missing, "machine-1")
		_, err = r.LiveActivation(ctx, mine.ID, theirLicence.ID, "machine-1")
		wantSame(t, "LiveActivation(theirs)", err, want)

		lists := map[string]func() (int, error){
			"Activations":        func() (int, error) { v, err := r.Activations(ctx, mine.ID, theirLicence.ID); return len(v), err },
			"LicenceAudit":       func() (int, error) { v, err := r.LicenceAudit(ctx, mine.ID, theirLicence.ID); return len(v), err },
			"OrganizationEvents": func() (int, error) { v, err := r.OrganizationEvents(ctx, mine.ID); return len(v), err },
			"FindLicences(id)": func() (int, error) {
				v, err := r.FindLicences(ctx, mine.ID, store.LicenceFilter{QLicenceID: &theirLicence.ID, Limit: 10}, base)
				return len(v), err
			},
			"FindLicences(ref)": func() (int, error) {
				v, err := r.FindLicences(ctx, mine.ID, store.LicenceFilter{Q: ptr("their-ref"), Limit: 10}, base)
				return len(v), err
			},
		}
		for name, list := range lists {
			if n, err := list(); n != 0 || err != nil {
				t.Errorf("%s() = %d rows, %v, want none, nil", name, n, err)
			}
		}
		got, err := r.FindLicences(ctx, mine.ID, store.LicenceFilter{Email: ptr("same@example.com"), Limit: 10}, base)
		if len(got) != 1 || got[0].ID != myLicence.ID || err != nil {
			t.Errorf("FindLicences(shared email) = %+v, %v, want only mine", got, err)
		}
		c, err := r.CountLicences(ctx, mine.ID, nil, base, base)
		if err != nil || c.All != 1 || c.LiveMachines != 0 {
			t.Errorf("CountLicences() = %+v, %v, want 1 licence, no machines", c, err)
		}
		c, err = r.CountLicences(ctx, mine.ID, &theirProduct.ID, base, base)
		if err != nil || *c != (store.LicenceCounts{}) {
			t.Errorf("CountLicences(their product) = %+v, %v, want zeros", c, err)
		}
		// Licence ids are global: another organization's is taken.
		if taken, err := r.LicenceIDTaken(ctx, theirLicence.ID); !taken || err != nil {
			t.Errorf("LicenceIDTaken(theirs) = %v, %v, want true, nil", taken, err)
		}
		if n, err := r.PlanLicenceCount(ctx, mine.ID, base); n != 1 || err != nil {
			t.Errorf("PlanLicenceCount() = %d, %v, want 1", n, err)
		}
	})

	err := s.InTx(ctx, func(tx store.Tx) error {
		checkIsolatedWrites(t, tx, mine.ID, theirLicence, theirActivation, missing)
		return nil
	})
	if err != nil {
		t.Fatalf("InTx() error = %v", err)
	}
	wantTheirs := stored(theirLicence)
	wantTheirs.LiveActivations = 1
	if diff := cmp.Diff(wantTheirs, readLicence(t, s, other.ID, theirLicence.ID)); diff != "" {
		t.Errorf("their licence changed (-want +got):\n%s", diff)
	}
	if got, err := s.Activation(ctx, other.ID, theirActivation.ID); err != nil || !got.IsLive() || got.MachineID != "machine-1" {
		t.Errorf("their activation = %+v, %v, want it live and unchanged", got, err)
	}
	if got, err := s.LicenceAudit(ctx, other.ID, theirLicence.ID); err != nil || len(got) != 1 || string(got[0].Data) != `{"theirs":true}` {
		t.Errorf("their audit = %+v, %v, want unchanged", got, err)
	}
	if c, err := s.CountLicences(ctx, other.ID, nil, base, base); err != nil || c.All != 1 || c.LiveMachines != 1 {
		t.Errorf("their counts = %+v, %v, want 1 licence, 1 machine", c, err)
	}
}

func checkIsolatedWrites(t *testing.T, tx store.Tx, myOrg string, theirs *licentia.Licence, theirActivation *licentia.Activation, missing string) {
	ctx := t.Context()
	_, want := tx.LockLicence(ctx, myOrg, missing)
	wantCode(t, "LockLicence(missing)", want, licentia.CodeLicenceNotFound)
	_, err := tx.LockLicence(ctx, myOrg, theirs.ID)
	wantSame(t, "LockLicence(theirs)", err, want)

	after := *theirs
	after.OrgID, after.Status = myOrg, licentia.StatusRevoked
	missingAfter := after
	missingAfter.ID = missing
	want = tx.UpdateLicence(ctx, &missingAfter)
	wantCode(t, "UpdateLicence(missing)", want, licentia.CodeLicenceNotFound)
	wantSame(t, "UpdateLicence(theirs)", tx.UpdateLicence(ctx, &after), want)

	want = tx.AnonymiseActivations(ctx, myOrg, missing, base)
	wantCode(t, "AnonymiseActivations(missing)", want, licentia.CodeLicenceNotFound)
	wantSame(t, "AnonymiseActivations(theirs)", tx.AnonymiseActivations(ctx, myOrg, theirs.ID, base), want)

	a := newActivation(theirs, "machine-2")
	a.OrgID = myOrg
	missingA := *a
	missingA.ID, missingA.LicenceID = licentia.NewID(), missing
	want = tx.CreateActivation(ctx, &missingA)
	wantCode(t, "CreateActivation(missing licence)", want, licentia.CodeLicenceNotFound)
	wantSame(t, "CreateActivation(their licence)", tx.CreateActivation(ctx, a), want)

	_, _, want = tx.DeactivateActivation(ctx, myOrg, missing, base)
	wantCode(t, "DeactivateActivation(missing)", want, licentia.CodeNotFound)
	_, _, err = tx.DeactivateActivation(ctx, myOrg, theirActivation.ID, base)
	wantSame(t, "DeactivateActivation(theirs)", err, want)

	touch := *theirActivation
	touch.OrgID, touch.Label = myOrg, "mine now"
	missingTouch := touch
	missingTouch.ID = missing
	want = tx.TouchActivation(ctx, &missingTouch)
	wantCode(t, "TouchActivation(missing)", want, licentia.CodeNotFound)
	wantSame(t, "TouchActivation(theirs)", tx.TouchActivation(ctx, &touch), want)

	rewrite := func([]byte) []byte { return []byte(`{"rewritten":true}`) }
	if err := tx.RewriteLicenceAudit(ctx, myOrg, theirs.ID, rewrite); err != nil {
		t.Errorf("RewriteLicenceAudit(theirs) error = %v, want nil, as for a missing licence", err)
	}
	// None of the above spoilt the transaction.
	if _, err := tx.Organization(ctx, myOrg); err != nil {
		t.Errorf("Organization() after isolated writes error = %v", err)
	}
}

// testLicenceMalformedIDs gives licence methods ids that are not stored ids:
// they answer like missing ones and leave a transaction usable.
func testLicenceMalformedIDs(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	l := newLicence(o.ID, p.ID, "a@example.com", base)
	createLicences(t, s, l)
	for _, bad := range []string{"", "not-a-uuid", strings.ToUpper(l.ID), "' OR '1'='1", l.ID + "\x00", "acme-\xff\xfe"} {
		err := s.InTx(ctx, func(tx store.Tx) error {
			_, err := tx.Licence(ctx, o.ID, bad)
			wantCode(t, "Licence(bad)", err, licentia.CodeLicenceNotFound)
			_, err = tx.Licence(ctx, bad, l.ID)
			wantCode(t, "Licence(bad org)", err, licentia.CodeLicenceNotFound)
			_, err = tx.LicenceByID(ctx, bad)
			wantCode(t, "LicenceByID(bad)", err, licentia.CodeLicenceNotFound)
			if taken, err := tx.LicenceIDTaken(ctx, bad); taken || err != nil {
				t.Errorf("LicenceIDTaken(%q) = %v, %v, want false, nil", bad, taken, err)
			}
			_, err = tx.LicenceByExternalRef(ctx, o.ID, bad, bad)
			wantCode(t, "LicenceByExternalRef(bad)", err, licentia.CodeLicenceNotFound)
			_, err = tx.LockLicence(ctx, o.ID, bad)
			wantCode(t, "LockLicence(bad)", err, licentia.CodeLicenceNotFound)
			_, err = tx.Activation(ctx, o.ID, bad)
			wantCode(t, "Activation(bad)", err, licentia.CodeNotFound)
			_, err = tx.LiveActivation(ctx, o.ID, l.ID, bad)
			wantCode(t, "LiveActivation(bad)", err, licentia.CodeNotFound)
			_, _, err = tx.DeactivateActivation(ctx, o.ID, bad, base)
			wantCode(t, "DeactivateActivation(bad)", err, licentia.CodeNotFound)
			wantCode(t, "AnonymiseActivations(bad)", tx.AnonymiseActivations(ctx, o.ID, bad, base), licentia.CodeLicenceNotFound)
			filters := []store.LicenceFilter{
				{QLicenceID: &bad}, {Email: &bad}, {Q: ptr("a"), ProductID: &bad}, {ExternalRef: &bad, ProductID: &p.ID},
			}
			if bad != "" { // an empty q is a prefix of every address
				filters = append(filters, store.LicenceFilter{Q: &bad})
			}
			for _, f := range filters {
				f.Limit = 10
				if ls, err := tx.FindLicences(ctx, o.ID, f, base); len(ls) != 0 || err != nil {
					t.Errorf("FindLicences(%q) = %d licences, %v, want none", bad, len(ls), err)
				}
			}
			lists := map[string]func() (int, error){
				"Activations":        func() (int, error) { v, err := tx.Activations(ctx, o.ID, bad); return len(v), err },
				"LicenceAudit":       func() (int, error) { v, err := tx.LicenceAudit(ctx, o.ID, bad); return len(v), err },
				"OrganizationEvents": func() (int, error) { v, err := tx.OrganizationEvents(ctx, bad); return len(v), err },
			}
			for name, list := range lists {
				if n, err := list(); n != 0 || err != nil {
					t.Errorf("%s(%q) = %d rows, %v, want none, nil", name, bad, n, err)
				}
			}
			if c, err := tx.CountLicences(ctx, bad, nil, base, base); err != nil || c.All != 0 {
				t.Errorf("CountLicences(%q) = %+v, %v, want zeros", bad, c, err)
			}
			if c, err := tx.CountLicences(ctx, o.ID, &bad, base, base); err != nil || c.All != 0 {
				t.Errorf("CountLicences(product %q) = %+v, %v, want zeros", bad, c, err)
			}
			if n, err := tx.PlanLicenceCount(ctx, bad, base); n != 0 || err != nil {
				t.Errorf("PlanLicenceCount(%q) = %d, %v, want 0", bad, n, err)
			}
			if _, err := tx.Licence(ctx, o.ID, l.ID); err != nil {
				t.Errorf("Licence(valid) after malformed ids error = %v", err)
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Errorf("InTx(%q) error = %v, want %v", bad, err, errRollback)
		}
	}
}

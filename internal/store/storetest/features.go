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

// putFeature adds or renames a product's feature in a transaction of its own.
func putFeature(t *testing.T, s store.Store, p *licentia.Product, code, name string, at time.Time) *licentia.Feature {
	t.Helper()
	var stored *licentia.Feature
	inTx(t, s, func(tx store.Tx) error {
		var err error
		stored, _, err = tx.PutProductFeature(t.Context(), &licentia.Feature{ProductID: p.ID, OrgID: p.OrgID, Code: code, Name: name, CreatedAt: at})
		return err
	})
	return stored
}

// testProductFeatures: the catalogue. A feature is added, then renamed
// keeping its created_at; the list is by code; another organization sees
// none of it, can neither rename nor delete it; a missing one answers
// not_found when deleted.
func testProductFeatures(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	other, theirs := licenceSetup(t, s, "other")
	putFeature(t, s, p, "sso", "Single sign-on", base)
	putFeature(t, s, p, "export-pdf", "PDF export", base.Add(time.Minute))
	var created bool
	inTx(t, s, func(tx store.Tx) error {
		f, c, err := tx.PutProductFeature(ctx, &licentia.Feature{ProductID: p.ID, OrgID: o.ID, Code: "sso", Name: "SSO", CreatedAt: base.Add(time.Hour)})
		created = c
		if err == nil && !f.CreatedAt.Equal(base) {
			t.Errorf("PutProductFeature(rename) created_at = %v, want %v", f.CreatedAt, base)
		}
		return err
	})
	if created {
		t.Errorf("PutProductFeature(rename) created = true, want false")
	}
	want := []licentia.Feature{
		{ProductID: p.ID, OrgID: o.ID, Code: "export-pdf", Name: "PDF export", CreatedAt: base.Add(time.Minute)},
		{ProductID: p.ID, OrgID: o.ID, Code: "sso", Name: "SSO", CreatedAt: base},
	}
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.ProductFeatures(ctx, o.ID, p.ID)
		if err != nil {
			t.Fatalf("ProductFeatures() error = %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ProductFeatures() mismatch (-want +got):\n%s", diff)
		}
		if got, err := r.ProductFeatures(ctx, other.ID, p.ID); len(got) != 0 || err != nil {
			t.Errorf("ProductFeatures(another organization) = %v, %v, want none", got, err)
		}
	})
	err := s.InTx(ctx, func(tx store.Tx) error {
		_, _, err := tx.PutProductFeature(ctx, &licentia.Feature{ProductID: p.ID, OrgID: other.ID, Code: "sso", Name: "Theirs", CreatedAt: base})
		return err
	})
	wantCode(t, "PutProductFeature(another organization's product)", err, licentia.CodeProductNotFound)
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteProductFeature(ctx, other.ID, p.ID, "sso") })
	wantCode(t, "DeleteProductFeature(another organization)", err, licentia.CodeNotFound)
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteProductFeature(ctx, o.ID, p.ID, "missing") })
	wantCode(t, "DeleteProductFeature(missing)", err, licentia.CodeNotFound)
	inTx(t, s, func(tx store.Tx) error { return tx.DeleteProductFeature(ctx, o.ID, p.ID, "sso") })
	if got, err := s.ProductFeatures(ctx, o.ID, p.ID); len(got) != 1 || err != nil {
		t.Errorf("ProductFeatures() after delete = %v, %v, want export-pdf alone", got, err)
	}
	putFeature(t, s, theirs, "sso", "Theirs", base)
	if got, err := s.ProductFeatures(ctx, other.ID, theirs.ID); len(got) != 1 || err != nil {
		t.Errorf("ProductFeatures(other product) = %v, %v, want its own", got, err)
	}
}

// testFeatureLimit: the 201st feature of a product answers conflict, and a
// rename at the limit is still allowed.
func testFeatureLimit(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, p := licenceSetup(t, s, "acme")
	inTx(t, s, func(tx store.Tx) error {
		for i := range licentia.MaxFeatures {
			f := &licentia.Feature{ProductID: p.ID, OrgID: p.OrgID, Code: fmt.Sprintf("f%03d", i), Name: "F", CreatedAt: base}
			if _, _, err := tx.PutProductFeature(ctx, f); err != nil {
				return err
			}
		}
		return nil
	})
	err := s.InTx(ctx, func(tx store.Tx) error {
		_, _, err := tx.PutProductFeature(ctx, &licentia.Feature{ProductID: p.ID, OrgID: p.OrgID, Code: "one-more", Name: "F", CreatedAt: base})
		return err
	})
	wantCode(t, "PutProductFeature(201st)", err, licentia.CodeConflict)
	putFeature(t, s, p, "f000", "Renamed", base)
}

// testLicenceGrants: a licence's grants are written with it, read back by
// code with their expiries on every read, replaced by an update, and
// found by the feature filter of find and counts. A grant of a feature
// the product lacks answers conflict with nothing written; a granted
// feature cannot be deleted, whatever the licence's state.
func testLicenceGrants(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	other, theirs := licenceSetup(t, s, "other")
	putFeature(t, s, p, "export-pdf", "PDF export", base)
	putFeature(t, s, p, "sso", "SSO", base)
	putFeature(t, s, theirs, "sso", "SSO", base)
	l := newLicence(o.ID, p.ID, "a@example.com", base)
	l.Features = []licentia.FeatureGrant{{Code: "export-pdf", ExpiresAt: ptr(base.Add(time.Hour))}, {Code: "sso"}}
	plain := newLicence(o.ID, p.ID, "b@example.com", base)
	stranger := newLicence(other.ID, theirs.ID, "c@example.com", base)
	stranger.Features = []licentia.FeatureGrant{{Code: "sso"}}
	createLicences(t, s, l, plain, stranger)

	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.Licence(ctx, o.ID, l.ID)
		if err != nil {
			t.Fatalf("Licence() error = %v", err)
		}
		if diff := cmp.Diff(l.Features, got.Features); diff != "" {
			t.Errorf("Licence().Features mismatch (-want +got):\n%s", diff)
		}
		found, err := r.FindLicences(ctx, o.ID, store.LicenceFilter{Feature: ptr("sso"), Limit: 10}, base)
		if err != nil || len(found) != 1 || found[0].ID != l.ID {
			t.Errorf("FindLicences(feature sso) = %d licences, %v, want only %s", len(found), err, l.ID)
		}
		c, err := r.CountLicencesWithFeature(ctx, o.ID, nil, "sso", base, base)
		if err != nil || c.All != 1 || c.Active != 1 || c.IssuedSince != 1 {
			t.Errorf("CountLicencesWithFeature(sso) = %+v, %v, want one active licence", c, err)
		}
		c, err = r.CountLicencesWithFeature(ctx, o.ID, ptr(theirs.ID), "sso", base, base)
		if err != nil || c.All != 0 {
			t.Errorf("CountLicencesWithFeature(another organization's product) = %+v, %v, want none", c, err)
		}
	})

	// A grant of a feature the product lacks (another product's) writes
	// nothing.
	err := s.InTx(ctx, func(tx store.Tx) error {
		bad := newLicence(o.ID, p.ID, "d@example.com", base)
		bad.Features = []licentia.FeatureGrant{{Code: "missing"}}
		return tx.CreateLicence(ctx, bad)
	})
	wantCode(t, "CreateLicence(unknown feature)", err, licentia.CodeConflict)

	// Replaced: export-pdf goes, sso keeps, and a revoked licence still
	// holds its grants against deletion.
	updateLicence(t, s, o.ID, l.ID, func(l *licentia.Licence) {
		l.Features = []licentia.FeatureGrant{{Code: "sso", ExpiresAt: ptr(base.Add(2 * time.Hour))}}
		l.Status, l.StatusChangedAt = licentia.StatusRevoked, ptr(base)
	})
	inTx(t, s, func(tx store.Tx) error { return tx.DeleteProductFeature(ctx, o.ID, p.ID, "export-pdf") })
	err = s.InTx(ctx, func(tx store.Tx) error { return tx.DeleteProductFeature(ctx, o.ID, p.ID, "sso") })
	wantCode(t, "DeleteProductFeature(granted by a revoked licence)", err, licentia.CodeConflict)
	got, err := s.Licence(ctx, o.ID, l.ID)
	if err != nil {
		t.Fatalf("Licence() error = %v", err)
	}
	if diff := cmp.Diff([]licentia.FeatureGrant{{Code: "sso", ExpiresAt: ptr(base.Add(2 * time.Hour))}}, got.Features); diff != "" {
		t.Errorf("Licence().Features after update mismatch (-want +got):\n%s", diff)
	}
	// Taken off: the feature can go.
	updateLicence(t, s, o.ID, l.ID, func(l *licentia.Licence) { l.Features = nil })
	inTx(t, s, func(tx store.Tx) error { return tx.DeleteProductFeature(ctx, o.ID, p.ID, "sso") })
	if found, err := s.FindLicences(ctx, o.ID, store.LicenceFilter{Feature: ptr("sso"), Limit: 10}, base); len(found) != 0 || err != nil {
		t.Errorf("FindLicences(feature sso) after removal = %d licences, %v, want none", len(found), err)
	}
}

// testFeatureGrantRace: on every engine, feature deletions racing grants
// of the same feature never leave a grant of a deleted feature, and
// racers adding features past the limit never make more than the limit.
func testFeatureGrantRace(t *testing.T, s store.Store) {
	const racers = 8
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	for round := range 4 {
		code := fmt.Sprintf("race-%d", round)
		putFeature(t, s, p, code, "Raced", base)
		var wg sync.WaitGroup
		errs := make([]error, racers)
		for i := range racers {
			wg.Go(func() {
				errs[i] = s.InTx(ctx, func(tx store.Tx) error {
					if i%2 == 0 {
						return tx.DeleteProductFeature(ctx, o.ID, p.ID, code)
					}
					l := newLicence(o.ID, p.ID, fmt.Sprintf("r%d-%d@example.com", round, i), base)
					l.Features = []licentia.FeatureGrant{{Code: code}}
					return tx.CreateLicence(ctx, l)
				})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if c := licentia.ErrorCode(err); err != nil && c != licentia.CodeConflict && c != licentia.CodeNotFound {
				t.Errorf("round %d racer %d: error = %v, want conflict or not_found", round, i, err)
			}
		}
		fs, err := s.ProductFeatures(ctx, o.ID, p.ID)
		if err != nil {
			t.Fatalf("ProductFeatures() error = %v", err)
		}
		kept := false
		for _, f := range fs {
			kept = kept || f.Code == code
		}
		granted, err := s.FindLicences(ctx, o.ID, store.LicenceFilter{Feature: &code, Limit: 100}, base)
		if err != nil {
			t.Fatalf("FindLicences() error = %v", err)
		}
		if !kept && len(granted) > 0 {
			t.Errorf("round %d: feature deleted yet %d licences grant it", round, len(granted))
		}
	}

	// Racers for the last places: never more than the limit.
	inTx(t, s, func(tx store.Tx) error {
		for i := range licentia.MaxFeatures - 10 {
			f := &licentia.Feature{ProductID: p.ID, OrgID: o.ID, Code: fmt.Sprintf("f%03d", i), Name: "F", CreatedAt: base}
			if _, _, err := tx.PutProductFeature(ctx, f); err != nil {
				return err
			}
		}
		return nil
	})
	var wg sync.WaitGroup
	for i := range 2 * racers {
		wg.Go(func() {
			_ = s.InTx(ctx, func(tx store.Tx) error {
				_, _, err := tx.PutProductFeature(ctx, &licentia.Feature{ProductID: p.ID, OrgID: o.ID, Code: fmt.Sprintf("last-%d", i), Name: "F", CreatedAt: base})
				return err
			})
		})
	}
	wg.Wait()
	if fs, err := s.ProductFeatures(ctx, o.ID, p.ID); len(fs) != licentia.MaxFeatures || err != nil {
		t.Errorf("ProductFeatures() after racing for the last places = %d, %v, want %d", len(fs), err, licentia.MaxFeatures)
	}
}

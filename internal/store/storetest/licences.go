package storetest

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// newLicence returns an active, perpetual admin licence issued at issued.
func newLicence(orgID, productID, email string, issued time.Time) *licentia.Licence {
	return &licentia.Licence{
		ID: licentia.NewID(), OrgID: orgID, ProductID: productID, Email: email, IssuedAt: issued,
		LimitKind: licentia.LimitMachines, LimitCount: 3, Major: 1, Status: licentia.StatusActive,
		Source: licentia.SourceAdmin, CreatedAt: issued, UpdatedAt: issued,
	}
}

// licenceSetup stores an organization with one product.
func licenceSetup(t *testing.T, s store.Store, slug string) (*licentia.Organization, *licentia.Product) {
	t.Helper()
	o := createOrganization(t, s, slug)
	p := newProduct(o.ID, slug+"-app", "P"+licentia.NewID()[:8])
	createProducts(t, s, p)
	return o, p
}

// createLicences stores licences in one transaction.
func createLicences(t *testing.T, s store.Store, ls ...*licentia.Licence) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, l := range ls {
			if err := tx.CreateLicence(t.Context(), l); err != nil {
				return err
			}
		}
		return nil
	})
}

// updateLicence locks a licence, applies change to a copy and writes it, as
// the operations do, and returns the copy.
func updateLicence(t *testing.T, s store.Store, orgID, id string, change func(l *licentia.Licence)) *licentia.Licence {
	t.Helper()
	var after licentia.Licence
	inTx(t, s, func(tx store.Tx) error {
		before, err := tx.LockLicence(t.Context(), orgID, id)
		if err != nil {
			return err
		}
		after = *before
		change(&after)
		return tx.UpdateLicence(t.Context(), &after)
	})
	return &after
}

// readLicence reads a licence that must exist.
func readLicence(t *testing.T, r store.Reader, orgID, id string) *licentia.Licence {
	t.Helper()
	l, err := r.Licence(t.Context(), orgID, id)
	if err != nil {
		t.Fatalf("Licence(%s) error = %v", id, err)
	}
	return l
}

// atMillis is a time as stored: UTC, whole milliseconds.
func atMillis(t time.Time) time.Time { return licentia.TruncateMillis(t) }

func atMillisPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	return ptr(atMillis(*t))
}

// stored returns l as a store reads it back: times in UTC at millisecond
// precision.
func stored(l *licentia.Licence) *licentia.Licence {
	c := *l
	c.IssuedAt, c.CreatedAt, c.UpdatedAt = atMillis(c.IssuedAt), atMillis(c.CreatedAt), atMillis(c.UpdatedAt)
	c.ExpiresAt, c.StatusChangedAt, c.TrialEndsAt = atMillisPtr(c.ExpiresAt), atMillisPtr(c.StatusChangedAt), atMillisPtr(c.TrialEndsAt)
	c.SubscriptionEndedAt, c.AnonymisedAt = atMillisPtr(c.SubscriptionEndedAt), atMillisPtr(c.AnonymisedAt)
	return &c
}

// licenceTimesUTC reports the times of l not in UTC; cmp compares times
// with Equal, which ignores the zone.
func licenceTimesUTC(t *testing.T, what string, l *licentia.Licence) {
	t.Helper()
	times := []*time.Time{&l.IssuedAt, &l.CreatedAt, &l.UpdatedAt, l.ExpiresAt, l.StatusChangedAt, l.TrialEndsAt,
		l.SubscriptionEndedAt, l.AnonymisedAt}
	for _, at := range times {
		if at != nil && at.Location() != time.UTC {
			t.Errorf("%s: time %s is in %v, want UTC", what, at, at.Location())
		}
	}
}

// testLicences writes one licence with every field set, at times finer than
// a millisecond and in another zone, and one with every optional field
// unset, and reads both back through every read.
func testLicences(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	zone := time.FixedZone("UTC-3", -3*3600)
	at := time.Date(2026, 2, 3, 4, 5, 6, 789_654_321, zone)
	full := newLicence(o.ID, p.ID, "Zoë.Full@Example.com", at)
	full.ExpiresAt, full.TrialEndsAt = ptr(at.Add(14*24*time.Hour)), ptr(at.Add(14*24*time.Hour))
	full.LimitKind, full.LimitCount, full.Major = licentia.LimitSeats, licentia.MaxLimitCount, 65535
	full.StatusReason, full.StatusChangedAt = ptr("a reason"), ptr(at.Add(time.Minute))
	full.Source, full.IntegrationID, full.ExternalRef = licentia.SourceProvider, ptr(licentia.NewID()), ptr(" Order #1 ")
	full.Provider = licentia.ProviderRefs{OrderID: ptr("ord_1"), SubscriptionID: ptr("sub_1"), CustomerID: ptr("cus_1"),
		CheckoutID: ptr("cs_1"), OrderNumber: ptr("325-10566")}
	full.Replaces = ptr(licentia.NewID())
	full.SubscriptionEndedAt, full.AnonymisedAt = ptr(at.Add(time.Hour)), ptr(at.Add(2*time.Hour))
	full.RenewalURL = ptr("https://example.com/renew?plan=pro&ü=1")
	full.CreatedAt, full.UpdatedAt = at.Add(time.Second), at.Add(2*time.Second)
	bare := newLicence(o.ID, p.ID, "bare@example.com", base)
	createLicences(t, s, full, bare)

	for _, l := range []*licentia.Licence{full, bare} {
		want := stored(l)
		eachReader(t, s, func(t *testing.T, r store.Reader) {
			reads := map[string]func() (*licentia.Licence, error){
				"Licence":     func() (*licentia.Licence, error) { return r.Licence(ctx, o.ID, l.ID) },
				"LicenceByID": func() (*licentia.Licence, error) { return r.LicenceByID(ctx, l.ID) },
				"FindLicences": func() (*licentia.Licence, error) {
					ls, err := r.FindLicences(ctx, o.ID, store.LicenceFilter{QLicenceID: &l.ID, Limit: 10}, base)
					if len(ls) != 1 {
						return nil, errors.Join(err, errors.New("want one licence"))
					}
					return &ls[0], err
				},
			}
			if l.ExternalRef != nil {
				reads["LicenceByExternalRef"] = func() (*licentia.Licence, error) {
					return r.LicenceByExternalRef(ctx, o.ID, p.ID, *l.ExternalRef)
				}
			}
			for name, read := range reads {
				got, err := read()
				if diff := cmp.Diff(want, got); diff != "" || err != nil {
					t.Errorf("%s(%s) error = %v, mismatch (-want +got):\n%s", name, l.Email, err, diff)
					continue
				}
				licenceTimesUTC(t, name, got)
			}
			if taken, err := r.LicenceIDTaken(ctx, l.ID); !taken || err != nil {
				t.Errorf("LicenceIDTaken(stored) = %v, %v, want true, nil", taken, err)
			}
		})
	}
	err := s.InTx(ctx, func(tx store.Tx) error {
		got, err := tx.LockLicence(ctx, o.ID, full.ID)
		if diff := cmp.Diff(stored(full), got); diff != "" || err != nil {
			t.Errorf("LockLicence() error = %v, mismatch (-want +got):\n%s", err, diff)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Errorf("InTx() error = %v, want %v", err, errRollback)
	}
	if taken, err := s.LicenceIDTaken(ctx, licentia.NewID()); taken || err != nil {
		t.Errorf("LicenceIDTaken(new) = %v, %v, want false, nil", taken, err)
	}
}

// testUpdateLicence changes every changeable field, then clears them.
func testUpdateLicence(t *testing.T, s store.Store) {
	o, p := licenceSetup(t, s, "acme")
	l := newLicence(o.ID, p.ID, "old@example.com", base)
	l.ExternalRef, l.TrialEndsAt, l.ExpiresAt = ptr("ref"), ptr(base.Add(time.Hour)), ptr(base.Add(time.Hour))
	createLicences(t, s, l)
	at := base.Add(time.Minute + 123456)
	set := func(u *licentia.Licence) {
		u.Email, u.ExpiresAt, u.Status, u.StatusReason, u.StatusChangedAt = "New@Example.com", ptr(at.Add(time.Hour)), licentia.StatusRevoked, ptr("why"), &at
		u.TrialEndsAt, u.ExternalRef = nil, ptr("ref-2")
		u.Provider = licentia.ProviderRefs{OrderID: ptr("o"), SubscriptionID: ptr("s"), CustomerID: ptr("c"), CheckoutID: ptr("k")}
		u.SubscriptionEndedAt, u.AnonymisedAt, u.UpdatedAt = &at, &at, at
		u.LimitKind, u.LimitCount, u.Major = licentia.LimitMachines, licentia.MaxLimitCount, 65535
	}
	after := updateLicence(t, s, o.ID, l.ID, set)
	got := readLicence(t, s, o.ID, l.ID)
	if diff := cmp.Diff(stored(after), got); diff != "" {
		t.Errorf("Licence() after update mismatch (-want +got):\n%s", diff)
	}
	if ls, err := s.FindLicences(t.Context(), o.ID, store.LicenceFilter{Email: ptr("new@example.COM"), Limit: 10}, base); len(ls) != 1 || err != nil {
		t.Errorf("FindLicences(new email) = %d licences, %v, want 1", len(ls), err)
	}
	cleared := updateLicence(t, s, o.ID, l.ID, func(u *licentia.Licence) {
		u.ExpiresAt, u.StatusReason, u.StatusChangedAt, u.ExternalRef = nil, nil, nil, nil
		u.Provider, u.SubscriptionEndedAt, u.AnonymisedAt, u.Status = licentia.ProviderRefs{}, nil, nil, licentia.StatusActive
	})
	if diff := cmp.Diff(stored(cleared), readLicence(t, s, o.ID, l.ID)); diff != "" {
		t.Errorf("Licence() after clearing mismatch (-want +got):\n%s", diff)
	}
}

// testLicenceConflicts: a taken id answers conflict whichever organization
// holds it, and so does an external reference taken on the same product;
// the same reference on another product is another sale. A conflict writes
// and counts nothing and leaves the transaction usable.
func testLicenceConflicts(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	other, theirs := licenceSetup(t, s, "other")
	second := newProduct(o.ID, "second", "SECOND")
	createProducts(t, s, second)
	first := newLicence(o.ID, p.ID, "a@example.com", base)
	first.ExternalRef = ptr("sale-1")
	theirLicence := newLicence(other.ID, theirs.ID, "b@example.com", base)
	createLicences(t, s, first, theirLicence)
	before, err := s.CountLicences(ctx, o.ID, nil, base, base)
	if err != nil {
		t.Fatalf("CountLicences() error = %v", err)
	}

	sameID := newLicence(o.ID, p.ID, "c@example.com", base)
	sameID.ID = first.ID
	theirID := newLicence(o.ID, p.ID, "c@example.com", base)
	theirID.ID = theirLicence.ID
	sameRef := newLicence(o.ID, p.ID, "c@example.com", base)
	sameRef.ExternalRef = ptr("sale-1")
	for _, tt := range []struct {
		name string
		l    *licentia.Licence
	}{{"taken id", sameID}, {"another organization's id", theirID}, {"taken external_ref", sameRef}} {
		err := s.InTx(ctx, func(tx store.Tx) error {
			wantCode(t, "CreateLicence("+tt.name+")", tx.CreateLicence(ctx, tt.l), licentia.CodeConflict)
			// The transaction goes on: a later write commits.
			return tx.AppendAudit(ctx, newAuditEntry(o.ID, `{}`))
		})
		if err != nil {
			t.Errorf("%s: InTx() error = %v", tt.name, err)
		}
	}
	if got, err := s.CountLicences(ctx, o.ID, nil, base, base); err != nil || *got != *before {
		t.Errorf("CountLicences() after conflicts = %+v, %v, want %+v", got, err, before)
	}
	if got := readLicence(t, s, o.ID, first.ID); got.Email != first.Email {
		t.Errorf("Licence() after conflict has email %q, want %q", got.Email, first.Email)
	}
	// The same reference on another product, and a different case of it on
	// the same product, are other sales.
	onSecond := newLicence(o.ID, second.ID, "d@example.com", base)
	onSecond.ExternalRef = ptr("sale-1")
	otherCase := newLicence(o.ID, p.ID, "e@example.com", base)
	otherCase.ExternalRef = ptr("SALE-1")
	createLicences(t, s, onSecond, otherCase)
	for _, tt := range []struct {
		product, ref string
		want         *licentia.Licence
	}{{p.ID, "sale-1", first}, {second.ID, "sale-1", onSecond}, {p.ID, "SALE-1", otherCase}} {
		got, err := s.LicenceByExternalRef(ctx, o.ID, tt.product, tt.ref)
		if err != nil || got.ID != tt.want.ID {
			t.Errorf("LicenceByExternalRef(%s, %s) = %v, %v, want %s", tt.product, tt.ref, got, err, tt.want.ID)
		}
	}
	_, err = s.LicenceByExternalRef(ctx, o.ID, p.ID, "sale-1 ")
	wantCode(t, "LicenceByExternalRef(untrimmed)", err, licentia.CodeLicenceNotFound)
}

// testLicenceRollback writes licences, activations, changes and events in a
// transaction that then fails: none of it stays, counters included.
func testLicenceRollback(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	kept := newLicence(o.ID, p.ID, "kept@example.com", base)
	createLicences(t, s, kept)
	createActivations(t, s, newActivation(kept, "machine-1"))
	before, err := s.CountLicences(ctx, o.ID, nil, base, base)
	if err != nil {
		t.Fatalf("CountLicences() error = %v", err)
	}
	l := newLicence(o.ID, p.ID, "gone@example.com", base)
	errStop := errors.New("stop")
	err = s.InTx(ctx, func(tx store.Tx) error {
		locked, err := tx.LockLicence(ctx, o.ID, kept.ID)
		if err != nil {
			return err
		}
		revoked := *locked
		revoked.Status = licentia.StatusRevoked
		return errors.Join(tx.CreateLicence(ctx, l), tx.CreateActivation(ctx, newActivation(l, "machine-2")),
			tx.UpdateLicence(ctx, &revoked), tx.InsertEvent(ctx, &licentia.Event{ID: licentia.NewID(), OrgID: o.ID,
				Type: licentia.EventLicenceIssued, LicenceID: &l.ID, At: base, Body: []byte(`{}`)}),
			tx.SetSetting(ctx, store.SettingSweepWatermark, strconv.FormatInt(base.Add(time.Hour).UnixMilli(), 10)), errStop)
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("InTx() error = %v, want %v", err, errStop)
	}
	_, err = s.Licence(ctx, o.ID, l.ID)
	wantCode(t, "Licence() after rollback", err, licentia.CodeLicenceNotFound)
	if got, err := s.CountLicences(ctx, o.ID, nil, base, base); err != nil || *got != *before {
		t.Errorf("CountLicences() after rollback = %+v, %v, want %+v", got, err, before)
	}
	if n, err := s.PlanLicenceCount(ctx, o.ID, base); n != 1 || err != nil {
		t.Errorf("PlanLicenceCount() after rollback = %d, %v, want 1", n, err)
	}
	if got := readLicence(t, s, o.ID, kept.ID); got.Status != licentia.StatusActive || got.LiveActivations != 1 {
		t.Errorf("Licence(kept) after rollback = %+v, want active with 1 live activation", got)
	}
	if events, err := s.OrganizationEvents(ctx, o.ID); len(events) != 0 || err != nil {
		t.Errorf("OrganizationEvents() after rollback = %+v, %v, want none", events, err)
	}
}

// testLicencePlanRace: racers check the plan and issue at once, one place
// left; exactly one wins.
func testLicencePlanRace(t *testing.T, s store.Store) {
	const racers = 8
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	trial := newLicence(o.ID, p.ID, "trial@example.com", base)
	trial.ExpiresAt, trial.TrialEndsAt = ptr(base.Add(time.Hour)), ptr(base.Add(time.Hour))
	revoked := newLicence(o.ID, p.ID, "gone@example.com", base)
	revoked.Status = licentia.StatusRevoked
	createLicences(t, s, newLicence(o.ID, p.ID, "a@example.com", base), trial, revoked)
	const limit = 3
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			errs[i] = s.InTx(ctx, func(tx store.Tx) error {
				if err := tx.LockOrganization(ctx, o.ID); err != nil {
					return err
				}
				n, err := tx.PlanLicenceCount(ctx, o.ID, base)
				if err != nil || n >= limit {
					return err
				}
				return tx.CreateLicence(ctx, newLicence(o.ID, p.ID, fmt.Sprintf("racer%d@example.com", i), base))
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("racer %d: InTx() error = %v", i, err)
		}
	}
	if n, err := s.PlanLicenceCount(ctx, o.ID, base); n != limit || err != nil {
		t.Errorf("PlanLicenceCount() = %d, %v, want %d", n, err, limit)
	}
	if ls, err := s.FindLicences(ctx, o.ID, store.LicenceFilter{Q: ptr("racer"), Limit: 100}, base); len(ls) != 1 || err != nil {
		t.Errorf("FindLicences(racers) = %d licences, %v, want exactly 1", len(ls), err)
	}
}

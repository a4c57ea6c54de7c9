package admin_test

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
)

// changeStart is where the fake clock of the licence-change tests begins.
var changeStart = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// changeFixture is an organization on plan with one product, change-app,
// served by an admin Service on a fake clock.
type changeFixture struct {
	svc   *admin.Service
	st    store.Store
	clock *clock.Fake
	org   *licentia.Organization
}

func newChangeFixture(t *testing.T, st store.Store, plan licentia.PlanID) *changeFixture {
	t.Helper()
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(changeStart)
	svc := admin.New(admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: signing.NewKeyring(m),
		Logger: slog.New(slog.DiscardHandler)})
	o, err := svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Change", Slug: "change", Plan: plan, OwnerEmail: "owner@change.example"})
	if err != nil {
		t.Fatal(err)
	}
	id, name, prefix, major := "change-app", "Change", "CHNG", int64(1)
	if _, err := svc.CreateProduct(t.Context(), licentia.OperatorActor, o.ID, admin.NewProduct{ID: &id, Name: &name, KeyPrefix: &prefix, CurrentMajor: &major}); err != nil {
		t.Fatal(err)
	}
	return &changeFixture{svc: svc, st: st, clock: clk, org: o}
}

// issue issues a licence of change-app with in's optional fields.
func (f *changeFixture) issue(t *testing.T, in admin.NewLicence) *licentia.Licence {
	t.Helper()
	product, email := "change-app", "buyer@change.example"
	in.ProductID, in.Email = &product, &email
	v, err := f.svc.IssueLicence(t.Context(), licentia.OperatorActor, f.org.ID, in)
	if err != nil {
		t.Fatalf("IssueLicence() error = %v", err)
	}
	return v.Licence
}

// activate gives licence id a live activation of machine m.
func (f *changeFixture) activate(t *testing.T, id, m string) {
	t.Helper()
	now := f.clock.Now().UTC().Truncate(time.Millisecond)
	a := &licentia.Activation{ID: licentia.NewID(), OrgID: f.org.ID, LicenceID: id, MachineID: m, Label: m, OS: "linux",
		AppVersion: "1.0.0", ActivatedAt: now, LastSeenAt: now}
	if err := f.st.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateActivation(t.Context(), a) }); err != nil {
		t.Fatalf("CreateActivation() error = %v", err)
	}
}

// checkCounts compares the counts of GET /v1/admin/licences/counts, from
// the counters, with those computed from every licence and activation.
func (f *changeFixture) checkCounts(t *testing.T, step string) {
	t.Helper()
	ctx, now := t.Context(), f.clock.Now()
	ls, err := f.st.FindLicences(ctx, f.org.ID, store.LicenceFilter{Limit: 1 << 20}, now)
	if err != nil {
		t.Fatalf("FindLicences() error = %v", err)
	}
	all, live := make([]*licentia.Licence, len(ls)), map[string]int64{}
	for i := range ls {
		all[i] = &ls[i]
		acts, err := f.st.Activations(ctx, f.org.ID, ls[i].ID)
		if err != nil {
			t.Fatalf("Activations() error = %v", err)
		}
		for _, a := range acts {
			if a.IsLive() {
				live[ls[i].ID]++
			}
		}
	}
	since := changeStart.Add(-time.Hour)
	got, err := f.st.CountLicences(ctx, f.org.ID, nil, since, now)
	if err != nil {
		t.Fatalf("CountLicences() error = %v", err)
	}
	if diff := cmp.Diff(storetest.BruteCounts(all, live, f.org.ID, nil, since, now), *got); diff != "" {
		t.Errorf("%s: counts mismatch (-rows +counters):\n%s", step, diff)
	}
	plan, err := f.st.PlanLicenceCount(ctx, f.org.ID, now)
	var want int64
	for _, l := range all {
		if l.CountsInPlan(now) {
			want++
		}
	}
	if err != nil || plan != want {
		t.Errorf("%s: PlanLicenceCount() = %d, %v; want %d", step, plan, err, want)
	}
}

func expiry(t time.Time) admin.LicenceChange { return admin.LicenceChange{ExpiresAt: &t} }

// TestUpdateLicenceCounts: on both engines, the counters follow every
// change of expiry (perpetual, term, past, future, trial end moved),
// before and after the sweeper moves lapsed licences, and limit and major
// changes leave them as they were.
func TestUpdateLicenceCounts(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newChangeFixture(t, st, licentia.PlanBusiness)
		hour := changeStart.Add(time.Hour)
		perpetual := f.issue(t, admin.NewLicence{}).ID
		term := f.issue(t, admin.NewLicence{ExpiresAt: &hour}).ID
		trial := f.issue(t, admin.NewLicence{ExpiresAt: &hour, Trial: new(true)}).ID
		revoked := f.issue(t, admin.NewLicence{}).ID
		if _, err := f.svc.RevokeLicence(t.Context(), licentia.OperatorActor, f.org.ID, revoked, admin.Reason("set up")); err != nil {
			t.Fatal(err)
		}
		f.activate(t, perpetual, "m1")
		f.activate(t, term, "m2")
		f.activate(t, trial, "m3")
		f.checkCounts(t, "before any change")
		for i, step := range []struct {
			id      string
			in      admin.LicenceChange
			advance time.Duration
			sweep   bool
		}{
			{perpetual, expiry(changeStart.Add(-time.Minute)), 0, false},
			{perpetual, admin.Perpetual(), 0, false},
			{term, admin.Perpetual(), 0, false},
			{term, expiry(changeStart.Add(30 * time.Minute)), 0, false},
			{trial, expiry(changeStart.Add(48 * time.Hour)), 0, false},
			{revoked, expiry(changeStart.Add(time.Minute)), 0, false},
			{perpetual, expiry(changeStart.Add(2 * time.Hour)), 0, false},
			{term, admin.LicenceChange{LimitCount: new(int64(9)), Major: new(int64(2))}, 45 * time.Minute, true},
			{term, expiry(changeStart.Add(3 * time.Hour)), 0, false},
			{perpetual, expiry(changeStart.Add(time.Hour)), 0, true},
			{trial, expiry(changeStart.Add(50 * time.Minute)), 0, false},
			{revoked, admin.Perpetual(), 0, true},
			{trial, expiry(changeStart.Add(4 * time.Hour)), 0, false},
		} {
			f.clock.Advance(step.advance)
			if step.sweep {
				if _, err := f.svc.SweepLicences(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			ch, err := f.svc.UpdateLicence(t.Context(), licentia.OperatorActor, f.org.ID, step.id, step.in)
			if err != nil {
				t.Fatalf("step %d: UpdateLicence() error = %v", i, err)
			}
			if !ch.Changed {
				t.Errorf("step %d: changed false, want true", i)
			}
			f.checkCounts(t, fmt.Sprintf("step %d", i))
			if _, err := f.svc.SweepLicences(t.Context()); err != nil {
				t.Fatal(err)
			}
			f.checkCounts(t, fmt.Sprintf("step %d, swept", i))
		}
		l, err := st.Licence(t.Context(), f.org.ID, trial)
		if err != nil || l.TrialEndsAt == nil || !l.TrialEndsAt.Equal(*l.ExpiresAt) || !l.ExpiresAt.Equal(changeStart.Add(4*time.Hour)) {
			t.Errorf("trial after its changes = %+v, %v; want trial_ends_at = expires_at = start + 4h", l, err)
		}
	})
}

// TestUpdateLicenceConcurrent: on PostgreSQL, where row locks decide, many
// changes of one licence at once, some giving expires_at (and so taking the
// organization's lock) and some not, alongside revokes and reinstates of
// it, all succeed without a deadlock; the licence ends as exactly one of
// the changes left it, and the counts are right.
func TestUpdateLicenceConcurrent(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newChangeFixture(t, st, licentia.PlanBusiness)
		id := f.issue(t, admin.NewLicence{}).ID
		f.activate(t, id, "m1")
		const n = 12
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for i := range n {
			wg.Go(func() {
				in := admin.LicenceChange{LimitCount: new(int64(i + 2)), Major: new(int64(i + 2))}
				if i%2 == 0 {
					t := changeStart.Add(time.Duration(i+1) * time.Hour)
					in.ExpiresAt = &t
				}
				if _, err := f.svc.UpdateLicence(t.Context(), licentia.OperatorActor, f.org.ID, id, in); err != nil {
					errs <- fmt.Errorf("change %d: %w", i, err)
				}
			})
			wg.Go(func() {
				op := f.svc.RevokeLicence
				if i%2 == 1 {
					op = f.svc.ReinstateLicence
				}
				if _, err := op(t.Context(), licentia.OperatorActor, f.org.ID, id, admin.Reason("race")); err != nil {
					errs <- fmt.Errorf("status change %d: %w", i, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		l, err := st.Licence(t.Context(), f.org.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		i := l.LimitCount - 2
		if i < 0 || i >= n || l.Major != l.LimitCount {
			t.Fatalf("licence after racing changes: limit_count %d, major %d; want one change's pair", l.LimitCount, l.Major)
		}
		// Every change gives limit and major together, so the last one
		// decides both; the expiry is the one of the last change that gave
		// one, never a mix.
		expiries := map[time.Time]bool{}
		for i := 0; i < n; i += 2 {
			expiries[changeStart.Add(time.Duration(i+1)*time.Hour)] = true
		}
		if l.ExpiresAt == nil || !expiries[l.ExpiresAt.UTC()] {
			t.Errorf("expires_at after racing changes = %v, want one change's", l.ExpiresAt)
		}
		audit, err := st.LicenceAudit(t.Context(), f.org.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		updates := 0
		for _, e := range audit {
			if e.Action == licentia.AuditLicenceUpdated {
				updates++
			}
		}
		if updates != n {
			t.Errorf("%d licence.updated audit entries, want %d (every change changed limit and major)", updates, n)
		}
		f.checkCounts(t, "after the race")
	})
}

// TestUpdateLicenceSeatsKept: lowering a limit below the live machines,
// on both engines, frees none of them and writes no
// activation.deactivated.
func TestUpdateLicenceSeatsKept(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newChangeFixture(t, st, licentia.PlanBusiness)
		id := f.issue(t, admin.NewLicence{LimitKind: new(licentia.LimitMachines), LimitCount: new(int64(4))}).ID
		for i := range 4 {
			f.activate(t, id, fmt.Sprintf("m%d", i))
		}
		if _, err := f.svc.UpdateLicence(t.Context(), licentia.OperatorActor, f.org.ID, id,
			admin.LicenceChange{LimitKind: new(licentia.LimitSeats), LimitCount: new(int64(1))}); err != nil {
			t.Fatal(err)
		}
		l, err := st.Licence(t.Context(), f.org.ID, id)
		if err != nil || l.LiveActivations != 4 || l.LimitCount != 1 || l.LimitKind != licentia.LimitSeats {
			t.Errorf("licence after lowering its limit = %+v, %v; want 4 live activations, 1 seat", l, err)
		}
		f.checkCounts(t, "after lowering the limit")
		evs, err := st.OrganizationEvents(t.Context(), f.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type == licentia.EventActivationDeactivated {
				t.Errorf("lowering a limit wrote %s", ev.Type)
			}
		}
	})
}

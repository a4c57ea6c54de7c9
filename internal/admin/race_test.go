package admin_test

import (
	"crypto/rand"
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

// engines runs fn on SQLite and on PostgreSQL (when
// LICENTIA_TEST_POSTGRES_URL is set), where races are decided by row locks
// between connections.
func engines(t *testing.T, fn func(t *testing.T, st store.Store)) {
	for _, e := range []struct {
		name string
		open func(t *testing.T) store.Store
	}{{"sqlite", storetest.OpenSQLite}, {"postgres", storetest.OpenPostgres}} {
		t.Run(e.name, func(t *testing.T) { fn(t, e.open(t)) })
	}
}

// raceFixture is an organization on plan with one product, served by an
// admin Service with a real master key under the default plans.
func raceFixture(t *testing.T, st store.Store, plan licentia.PlanID) (*admin.Service, *licentia.Organization) {
	t.Helper()
	return serviceFixture(t, st, licentia.DefaultPlans(), plan)
}

// serviceFixture is an organization on plan with one product, race-app,
// served by an admin Service with a real master key and a base URL (so
// webhooks are configured) under plans.
func serviceFixture(t *testing.T, st store.Store, plans licentia.Plans, plan licentia.PlanID) (*admin.Service, *licentia.Organization) {
	t.Helper()
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	svc := admin.New(admin.Options{Store: st, Clock: clock.NewFake(time.Now().UTC()), Plans: plans,
		Keys: signing.NewKeyring(m), BaseURL: hookBaseURL, Providers: shopProviders(newShop(t), time.Second),
		Logger: slog.New(slog.DiscardHandler)})
	o, err := svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Race", Slug: "race", Plan: plan, OwnerEmail: "owner@race.example"})
	if err != nil {
		t.Fatal(err)
	}
	id, name, prefix, major := "race-app", "Race", "RACE", int64(1)
	if _, err := svc.CreateProduct(t.Context(), licentia.OperatorActor, o.ID, admin.NewProduct{ID: &id, Name: &name, KeyPrefix: &prefix, CurrentMajor: &major}); err != nil {
		t.Fatal(err)
	}
	return svc, o
}

func issue(t *testing.T, svc *admin.Service, orgID string) (*admin.LicenceView, error) {
	product, email := "race-app", "buyer@race.example"
	return svc.IssueLicence(t.Context(), licentia.OperatorActor, orgID, admin.NewLicence{ProductID: &product, Email: &email})
}

// Of several issues racing for the plan's last place, exactly one wins.
func TestIssueRaceForLastPlace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		svc, o := raceFixture(t, st, licentia.PlanFree)
		limit := licentia.DefaultPlans()[licentia.PlanFree].ActiveLicences
		for range limit - 1 {
			if _, err := issue(t, svc, o.ID); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won, full := 0, 0
		for range 8 {
			wg.Go(func() {
				_, err := issue(t, svc, o.ID)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case licentia.ErrorCode(err) == licentia.CodePlanLimitReached:
					full++
				default:
					t.Errorf("IssueLicence() error = %v", err)
				}
			})
		}
		wg.Wait()
		if won != 1 || full != 7 {
			t.Errorf("racing issues: %d won, %d plan_limit_reached; want 1 and 7", won, full)
		}
		n, err := st.PlanLicenceCount(t.Context(), o.ID, time.Now().UTC())
		if err != nil || n != limit {
			t.Errorf("PlanLicenceCount() = %d, %v; want %d", n, err, limit)
		}
	})
}

// racePlace runs 8 callers of take at once for an organization's last
// place: exactly one wins and the others get plan_limit_reached.
func racePlace(t *testing.T, what string, take func(i int) error) {
	t.Helper()
	var mu sync.Mutex
	codes := map[licentia.Code]int{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			code := licentia.Code("ok")
			if err := take(i); err != nil {
				code = licentia.ErrorCode(err)
			}
			mu.Lock()
			defer mu.Unlock()
			codes[code]++
		})
	}
	wg.Wait()
	want := map[licentia.Code]int{"ok": 1, licentia.CodePlanLimitReached: 7}
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("outcomes of 8 racing %s mismatch (-want +got):\n%s", what, diff)
	}
}

// Of several callers racing for the plan's last place of any resource,
// exactly one wins.
func TestPlanRaceForLastPlace(t *testing.T) {
	eachResource(t, 1, func(t *testing.T, svc *admin.Service, orgID string, r planResource, limit int64) {
		racePlace(t, r.resource, func(i int) error { return r.take(t, svc, orgID, int(limit)+i) })
	})
}

// Of reinstates racing for the plan's last place, exactly one wins.
func TestReinstateRaceForLastPlace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		svc, o := serviceFixture(t, st, licentia.Plans{licentia.PlanFree: {ActiveLicences: 9, Products: 1}}, licentia.PlanFree)
		var revoked []string
		for range 8 {
			v, err := issue(t, svc, o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.RevokeLicence(t.Context(), licentia.OperatorActor, o.ID, v.Licence.ID, admin.Reason("refund")); err != nil {
				t.Fatal(err)
			}
			revoked = append(revoked, v.Licence.ID)
		}
		for range 8 {
			if _, err := issue(t, svc, o.ID); err != nil {
				t.Fatal(err)
			}
		}
		racePlace(t, "reinstates", func(i int) error {
			_, err := svc.ReinstateLicence(t.Context(), licentia.OperatorActor, o.ID, revoked[i], admin.Reason("paid"))
			return err
		})
	})
}

// Of two revokes of one licence at once, exactly one changes it and writes
// the one licence.revoked event.
func TestRevokeRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		svc, o := raceFixture(t, st, licentia.PlanBusiness)
		v, err := issue(t, svc, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		changed := make(chan bool, 4)
		for range 4 {
			wg.Go(func() {
				c, err := svc.RevokeLicence(t.Context(), licentia.OperatorActor, o.ID, v.Licence.ID, admin.Reason("refund"))
				if err != nil {
					t.Errorf("RevokeLicence() error = %v", err)
					return
				}
				changed <- c.Changed
			})
		}
		wg.Wait()
		close(changed)
		n := 0
		for c := range changed {
			if c {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d of 4 racing revokes changed the licence, want 1", n)
		}
		evs, err := st.OrganizationEvents(t.Context(), o.ID)
		if err != nil {
			t.Fatal(err)
		}
		revoked := 0
		for _, e := range evs {
			if e.Type == licentia.EventLicenceRevoked {
				revoked++
			}
		}
		if revoked != 1 {
			t.Errorf("%d licence.revoked events, want 1", revoked)
		}
	})
}

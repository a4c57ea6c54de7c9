package admin_test

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/integrity"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// reissueFixture is an organization with one product, served by an admin
// Service and an activation Service sharing one store and master key, as
// the API and the activation routes of several processes do.
type reissueFixture struct {
	st     store.Store
	master *signing.MasterKey
	svc    *admin.Service
	act    *activation.Service
	org    *licentia.Organization
}

func newReissueFixture(t *testing.T, st store.Store) *reissueFixture {
	t.Helper()
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	// As serve does on first start: the database records the master key's
	// fingerprint, which the integrity check compares.
	err = st.InTx(t.Context(), func(tx store.Tx) error {
		return tx.SetSetting(t.Context(), store.SettingMasterKeyFingerprint, m.Fingerprint())
	})
	if err != nil {
		t.Fatal(err)
	}
	clk, log, keys := clock.NewFake(time.Now().UTC()), slog.New(slog.DiscardHandler), signing.NewKeyring(m)
	cat := signing.NewCatalogue(st, clk, log)
	svc := admin.New(admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: keys, Catalogue: cat,
		BaseURL: hookBaseURL, Logger: log})
	o, err := svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Race", Slug: "race", Plan: licentia.PlanBusiness, OwnerEmail: "owner@race.example"})
	if err != nil {
		t.Fatal(err)
	}
	id, name, prefix, major := "race-app", "Race", "RACE", int64(1)
	if _, err := svc.CreateProduct(t.Context(), licentia.OperatorActor, o.ID, admin.NewProduct{ID: &id, Name: &name, KeyPrefix: &prefix, CurrentMajor: &major}); err != nil {
		t.Fatal(err)
	}
	if err := cat.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	act := activation.New(activation.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat, Validity: time.Hour, Logger: log})
	return &reissueFixture{st: st, master: m, svc: svc, act: act, org: o}
}

// issue issues a licence of limit machines.
func (f *reissueFixture) issue(t *testing.T, limit int64) *admin.LicenceView {
	t.Helper()
	product, email, kind := "race-app", "buyer@race.example", licentia.LimitMachines
	v, err := f.svc.IssueLicence(t.Context(), licentia.OperatorActor, f.org.ID, admin.NewLicence{ProductID: &product, Email: &email,
		LimitKind: &kind, LimitCount: &limit})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (f *reissueFixture) activate(t *testing.T, key, machine string) (*activation.Result, error) {
	none := ""
	return f.act.Activate(t.Context(), activation.Activate{LicenceKey: &key, MachineID: &machine, Label: &none, OS: &none, AppVersion: &none})
}

// wantClean runs the integrity check: every licence's live_activations and
// every counter row equal a recount of the rows.
func (f *reissueFixture) wantClean(t *testing.T) {
	t.Helper()
	r, err := integrity.Check(t.Context(), f.st, f.master, integrity.Options{})
	if err != nil {
		t.Fatalf("integrity.Check() error = %v", err)
	}
	if !r.OK {
		t.Errorf("integrity.Check() problems = %+v, want none", r.Problems)
	}
}

// TestReissueRacingActivations: machines activating on a licence while its
// key is reissued. Each activation either committed before the reissue,
// and its machine moved to the new licence with its activation id, or
// after, and was refused licence_revoked: no seat lost or duplicated, and
// the counters equal a recount.
func TestReissueRacingActivations(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newReissueFixture(t, st)
		v := f.issue(t, 100)
		if _, err := f.activate(t, *v.Key, "before"); err != nil {
			t.Fatal(err)
		}
		const n = 12
		var mu sync.Mutex
		won := map[string]string{} // activation id -> machine
		refused := 0
		var fresh *admin.Reissued
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				res, err := f.activate(t, *v.Key, fmt.Sprintf("machine-%d", i))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won[res.Activation.ID] = res.Activation.MachineID
				case licentia.ErrorCode(err) == licentia.CodeLicenceRevoked:
					refused++
				default:
					t.Errorf("Activate() error = %v", err)
				}
			})
			if i == n/2 {
				wg.Go(func() {
					r, err := f.svc.ReissueLicence(t.Context(), licentia.OperatorActor, f.org.ID, v.Licence.ID, admin.Reissue{Reason: new("leaked")})
					if err != nil {
						t.Errorf("ReissueLicence() error = %v", err)
					}
					mu.Lock()
					fresh = r
					mu.Unlock()
				})
			}
		}
		wg.Wait()
		if fresh == nil {
			t.FailNow()
		}
		if len(won)+refused != n {
			t.Errorf("%d activated, %d refused, want %d in all", len(won), refused, n)
		}
		acts, err := st.Activations(t.Context(), f.org.ID, fresh.Licence.ID)
		if err != nil {
			t.Fatal(err)
		}
		onNew := map[string]string{}
		for _, a := range acts {
			if a.IsLive() {
				onNew[a.ID] = a.MachineID
			}
		}
		if len(onNew) != len(won)+1 {
			t.Errorf("new licence holds %d live machines, want %d (every activation made, and the one before)", len(onNew), len(won)+1)
		}
		for id, m := range won {
			if onNew[id] != m {
				t.Errorf("activation %s of %s is not live on the new licence", id, m)
			}
		}
		old, err := st.Licence(t.Context(), f.org.ID, v.Licence.ID)
		if err != nil || old.LiveActivations != 0 || old.ReplacedBy == nil || *old.ReplacedBy != fresh.Licence.ID {
			t.Errorf("old licence = %+v, %v, want no live machine, replaced by %s", old, err, fresh.Licence.ID)
		}
		f.wantClean(t)
	})
}

// TestReissueRace: two reissues of one licence at once; exactly one makes
// a new licence, the other answers 409 conflict.
func TestReissueRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newReissueFixture(t, st)
		v := f.issue(t, 5)
		for i := range 3 {
			if _, err := f.activate(t, *v.Key, fmt.Sprintf("machine-%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		codes := map[licentia.Code]int{}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				_, err := f.svc.ReissueLicence(t.Context(), licentia.OperatorActor, f.org.ID, v.Licence.ID, admin.Reissue{Reason: new("leaked")})
				code := licentia.Code("ok")
				if err != nil {
					code = licentia.ErrorCode(err)
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if codes["ok"] != 1 || codes[licentia.CodeConflict] != 3 {
			t.Errorf("racing reissues: %v, want 1 ok and 3 conflict", codes)
		}
		email := "buyer@race.example"
		ls, err := st.FindLicences(t.Context(), f.org.ID, store.LicenceFilter{Email: &email, Limit: 10}, time.Now().UTC())
		if err != nil || len(ls) != 2 {
			t.Fatalf("licences = %d, %v, want the old one and one new one", len(ls), err)
		}
		for _, l := range ls {
			if l.ID != v.Licence.ID && l.LiveActivations != 3 {
				t.Errorf("new licence holds %d live machines, want 3", l.LiveActivations)
			}
		}
		f.wantClean(t)
	})
}

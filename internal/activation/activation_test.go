package activation_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"hash/fnv"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
	"github.com/licentia/licentia/sdk"
)

var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// engines are the stores every race runs on; PostgreSQL skips only when
// LICENTIA_TEST_POSTGRES_URL is unset.
var engines = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"sqlite", storetest.OpenSQLite},
	{"postgres", storetest.OpenPostgres},
}

// fixture is the activation service on a real store, with an organization
// and a product (desk-app) made through the administration operations.
type fixture struct {
	st    store.Store
	clock *clock.Fake
	admin *admin.Service
	svc   *activation.Service
	cat   *signing.Catalogue
	keys  *signing.Keyring
	org   *licentia.Organization
}

func newFixture(t *testing.T, st store.Store) *fixture {
	t.Helper()
	ctx := t.Context()
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	master, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatalf("NewMasterKey() error = %v", err)
	}
	clk := clock.NewFake(start)
	keys := signing.NewKeyring(master)
	log := slog.New(slog.DiscardHandler)
	adm := admin.New(admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: keys, Logger: log})
	org, err := adm.CreateOrganization(ctx, licentia.OperatorActor, admin.NewOrganization{
		Name: "Acme", Slug: "acme", Plan: licentia.PlanBusiness, OwnerEmail: "owner@acme.example",
	})
	if err != nil {
		t.Fatalf("CreateOrganization() error = %v", err)
	}
	_, err = adm.CreateProduct(ctx, licentia.OperatorActor, org.ID, admin.NewProduct{
		ID: ptr("desk-app"), Name: ptr("Desk"), KeyPrefix: ptr("DESK"), CurrentMajor: ptr[int64](3),
	})
	if err != nil {
		t.Fatalf("CreateProduct() error = %v", err)
	}
	cat := signing.NewCatalogue(st, clk, log)
	if err := cat.Refresh(ctx); err != nil {
		t.Fatalf("Catalogue.Refresh() error = %v", err)
	}
	svc := activation.New(activation.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat, Validity: 7 * 24 * time.Hour, Logger: log})
	return &fixture{st: st, clock: clk, admin: adm, svc: svc, cat: cat, keys: keys, org: org}
}

func ptr[T any](v T) *T { return &v }

// issue issues a licence of desk-app limited to count machines and returns
// its id and key.
func (f *fixture) issue(t *testing.T, count int64) (string, string) {
	t.Helper()
	kind := licentia.LimitMachines
	v, err := f.admin.IssueLicence(t.Context(), licentia.OperatorActor, f.org.ID, admin.NewLicence{
		ProductID: ptr("desk-app"), Email: ptr("ada@example.com"), LimitKind: &kind, LimitCount: &count,
	})
	if err != nil {
		t.Fatalf("IssueLicence() error = %v", err)
	}
	return v.Licence.ID, *v.Key
}

func machine(id string) activation.Machine {
	return activation.Machine{ID: id, Label: "Label of " + id, OS: "linux", AppVersion: "3.1.0"}
}

// liveMachines returns the machine ids of a licence's live activations,
// and checks the licence's own count of them agrees.
func (f *fixture) liveMachines(t *testing.T, licenceID string) []string {
	t.Helper()
	l, err := f.st.Licence(t.Context(), f.org.ID, licenceID)
	if err != nil {
		t.Fatalf("Licence() error = %v", err)
	}
	as, err := f.st.Activations(t.Context(), f.org.ID, licenceID)
	if err != nil {
		t.Fatalf("Activations() error = %v", err)
	}
	var live []string
	for _, a := range as {
		if a.DeactivatedAt == nil {
			live = append(live, a.MachineID)
		}
	}
	if l.LiveActivations != int64(len(live)) {
		t.Errorf("live_activations = %d, but %d activations are live", l.LiveActivations, len(live))
	}
	return live
}

// created counts the activation.created events of a licence, and its
// activation.created audit entries, which must agree.
func (f *fixture) created(t *testing.T, licenceID string) int {
	t.Helper()
	evs, err := f.st.OrganizationEvents(t.Context(), f.org.ID)
	if err != nil {
		t.Fatalf("OrganizationEvents() error = %v", err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == licentia.EventActivationCreated && e.LicenceID != nil && *e.LicenceID == licenceID {
			n++
		}
	}
	audit, err := f.st.LicenceAudit(t.Context(), f.org.ID, licenceID)
	if err != nil {
		t.Fatalf("LicenceAudit() error = %v", err)
	}
	entries := 0
	for _, a := range audit {
		if a.Action == licentia.AuditActivationCreated {
			entries++
		}
	}
	if entries != n {
		t.Errorf("%d activation.created audit entries, %d events; want them equal", entries, n)
	}
	return n
}

// race runs fn(i) for i in [0, n) at once and returns what each returned.
func race[T any](n int, fn func(i int) (T, error)) ([]T, []error) {
	out, errs := make([]T, n), make([]error, n)
	ready := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-ready
			out[i], errs[i] = fn(i)
		})
	}
	close(ready)
	wg.Wait()
	return out, errs
}

// TestLastSeatRace: N machines racing for the last seat of a licence: the
// licence row is locked while its seats are counted, so exactly one wins
// (201) and the others answer seat_limit_reached, with one
// activation.created, on both engines.
func TestLastSeatRace(t *testing.T) {
	const racers = 8
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			for round := range 3 {
				id, key := f.issue(t, 3)
				for i := range 2 {
					if _, err := f.svc.Activate(t.Context(), activate(key, machine(fmt.Sprintf("held-%d", i)))); err != nil {
						t.Fatalf("Activate(held-%d) error = %v", i, err)
					}
				}
				res, errs := race(racers, func(i int) (*activation.Result, error) {
					return f.svc.Activate(t.Context(), activate(key, machine(fmt.Sprintf("racer-%d", i))))
				})
				var winners []string
				for i, err := range errs {
					switch {
					case err == nil && res[i].Created:
						winners = append(winners, res[i].Activation.MachineID)
					case err == nil:
						t.Errorf("round %d, racer %d: 200 for a machine that held no seat", round, i)
					case licentia.ErrorCode(err) != licentia.CodeSeatLimitReached:
						t.Errorf("round %d, racer %d: error = %v, want seat_limit_reached", round, i, err)
					}
				}
				if len(winners) != 1 {
					t.Fatalf("round %d: winners %v, want exactly one", round, winners)
				}
				if live := f.liveMachines(t, id); len(live) != 3 {
					t.Errorf("round %d: live machines %v, want 3", round, live)
				}
				if n := f.created(t, id); n != 3 {
					t.Errorf("round %d: %d activation.created events, want 3 (two held, one winner)", round, n)
				}
			}
		})
	}
}

// TestSameMachineRace: the same machine activating twice at once takes one
// seat: one 201 and one 200 (or a failure a retry turns into 200), never
// two live activations for the machine, one activation.created.
func TestSameMachineRace(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			for round := range 5 {
				id, key := f.issue(t, 5)
				m := machine(fmt.Sprintf("twin-%d", round))
				res, errs := race(2, func(int) (*activation.Result, error) { return f.svc.Activate(t.Context(), activate(key, m)) })
				created := 0
				for i, err := range errs {
					if err != nil {
						t.Logf("round %d: racer %d error = %v; retrying", round, i, err)
						if res[i], err = f.svc.Activate(t.Context(), activate(key, m)); err != nil {
							t.Fatalf("round %d: retry error = %v", round, err)
						}
					}
					if res[i].Created {
						created++
					}
				}
				if created != 1 {
					t.Errorf("round %d: %d answers took a seat, want one 201 and one 200", round, created)
				}
				if res[0].Activation.ID != res[1].Activation.ID {
					t.Errorf("round %d: activations %s and %s, want the same one", round, res[0].Activation.ID, res[1].Activation.ID)
				}
				if live := f.liveMachines(t, id); len(live) != 1 || live[0] != m.ID {
					t.Errorf("round %d: live machines %v, want only %s", round, live, m.ID)
				}
				if n := f.created(t, id); n != 1 {
					t.Errorf("round %d: %d activation.created events, want 1", round, n)
				}
			}
		})
	}
}

// TestDeactivateRace: a machine deactivated twice at once is freed once:
// one changed true, one activation.deactivated.
func TestDeactivateRace(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			id, key := f.issue(t, 1)
			if _, err := f.svc.Activate(t.Context(), activate(key, machine("ada-laptop"))); err != nil {
				t.Fatalf("Activate() error = %v", err)
			}
			changed, errs := race(4, func(int) (bool, error) { return f.svc.Deactivate(t.Context(), seat(key, "ada-laptop")) })
			n := 0
			for i, err := range errs {
				if err != nil {
					t.Errorf("Deactivate() %d error = %v", i, err)
				}
				if changed[i] {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d deactivations changed something, want 1", n)
			}
			if live := f.liveMachines(t, id); len(live) != 0 {
				t.Errorf("live machines %v, want none", live)
			}
			audit, err := f.st.LicenceAudit(t.Context(), f.org.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			freed := 0
			for _, a := range audit {
				if a.Action == licentia.AuditActivationDeactivated {
					freed++
				}
			}
			if freed != 1 {
				t.Errorf("%d activation.deactivated audit entries, want 1", freed)
			}
		})
	}
}

// verdict verifies raw with desk-app's keys and returns its content.
func (f *fixture) verdict(t *testing.T, raw string) *sdk.Verdict {
	t.Helper()
	p, err := f.st.Product(t.Context(), f.org.ID, "desk-app")
	if err != nil {
		t.Fatalf("Product() error = %v", err)
	}
	v, err := sdk.VerifyVerdict(raw, signing.VerifierProduct(p))
	if err != nil {
		t.Fatalf("VerifyVerdict() error = %v", err)
	}
	return v
}

// TestVerdictValidity: a verdict is valid for the configured validity; a
// trial's active verdict never more than one day past the trial's end.
func TestVerdictValidity(t *testing.T) {
	f := newFixture(t, storetest.OpenSQLite(t))
	trialEnd := start.Add(36 * time.Hour)
	v, err := f.admin.IssueLicence(t.Context(), licentia.OperatorActor, f.org.ID, admin.NewLicence{
		ProductID: ptr("desk-app"), Email: ptr("ada@example.com"), ExpiresAt: &trialEnd, Trial: ptr(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, perpetualKey := f.issue(t, 1)
	for _, tt := range []struct {
		name, key string
		want      time.Time
	}{
		{"perpetual", perpetualKey, start.Add(7 * 24 * time.Hour)},
		{"trial", *v.Key, trialEnd.Add(24 * time.Hour)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := f.svc.Status(t.Context(), seat(tt.key, "ada-laptop"))
			if err != nil {
				t.Fatalf("Status() error = %v", err)
			}
			got := f.verdict(t, raw.Verdict)
			if got.ValidUntil != licentia.FormatTime(tt.want) {
				t.Errorf("valid_until = %s, want %s", got.ValidUntil, licentia.FormatTime(tt.want))
			}
		})
	}
}

// status asks for a machine's verdict.
func (f *fixture) status(t *testing.T, key, machineID string) string {
	t.Helper()
	raw, err := f.svc.Status(t.Context(), seat(key, machineID))
	if err != nil {
		t.Fatalf("Status() error = %v", err)
	}
	return raw.Verdict
}

// TestStatusReusesOnlyUnchangedVerdicts: the status route may answer the
// verdict it signed less than a second ago, but only while everything the
// verdict states is unchanged; any change is signed anew at once.
func TestStatusReusesOnlyUnchangedVerdicts(t *testing.T) {
	f := newFixture(t, storetest.OpenSQLite(t))
	ctx := t.Context()
	id, key := f.issue(t, 2)
	if _, err := f.svc.Activate(ctx, activate(key, machine("ada-laptop"))); err != nil {
		t.Fatal(err)
	}
	first := f.status(t, key, "ada-laptop")
	if got := f.verdict(t, first); got.IssuedAt != licentia.FormatTime(f.clock.Now()) || got.ActivationID == nil {
		t.Fatalf("first verdict = %+v, want issued now with an activation", got)
	}
	f.clock.Advance(999 * time.Millisecond)
	if got := f.status(t, key, "ada-laptop"); got != first {
		t.Errorf("verdict within a second of an unchanged one was signed anew: %s", f.verdict(t, got).IssuedAt)
	}
	if other := f.verdict(t, f.status(t, key, "bob-desktop")); other.MachineID != "bob-desktop" || other.ActivationID != nil {
		t.Errorf("another machine's verdict = %+v", other)
	}

	want := func(name, raw, state string, live bool) *sdk.Verdict {
		t.Helper()
		v := f.verdict(t, raw)
		if raw == first || v.State != state || (v.ActivationID != nil) != live || v.IssuedAt != licentia.FormatTime(f.clock.Now()) {
			t.Errorf("%s: verdict = %+v, want a new one of state %s (activation %v) issued now", name, v, state, live)
		}
		return v
	}
	if _, err := f.admin.RevokeLicence(ctx, licentia.OperatorActor, f.org.ID, id, admin.Reason("refund")); err != nil {
		t.Fatal(err)
	}
	want("after a revocation", f.status(t, key, "ada-laptop"), "revoked", true)
	if _, err := f.admin.ReinstateLicence(ctx, licentia.OperatorActor, f.org.ID, id, admin.Reason("refund")); err != nil {
		t.Fatal(err)
	}
	reinstated := want("after a reinstatement", f.status(t, key, "ada-laptop"), "active", true)
	if _, err := f.svc.Deactivate(ctx, seat(key, "ada-laptop")); err != nil {
		t.Fatal(err)
	}
	want("after a deactivation", f.status(t, key, "ada-laptop"), "active", false)
	if _, err := f.svc.Activate(ctx, activate(key, machine("ada-laptop"))); err != nil {
		t.Fatal(err)
	}
	again := want("after a new activation", f.status(t, key, "ada-laptop"), "active", true)
	if *again.ActivationID == *reinstated.ActivationID {
		t.Errorf("verdict names the freed activation %s", *again.ActivationID)
	}
	if _, err := f.admin.RotateSigningKey(ctx, licentia.OperatorActor, f.org.ID, "desk-app", admin.RotateKey{}); err != nil {
		t.Fatal(err)
	}
	if err := f.cat.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if rotated := f.verdict(t, f.status(t, key, "ada-laptop")); rotated.KeyFingerprint == again.KeyFingerprint {
		t.Errorf("verdict after a key rotation is signed by the old key %s", rotated.KeyFingerprint)
	}

	// A term ending within the second turns the verdict expired at once.
	end := f.clock.Now().Add(500 * time.Millisecond)
	kind := licentia.LimitMachines
	v, err := f.admin.IssueLicence(ctx, licentia.OperatorActor, f.org.ID, admin.NewLicence{
		ProductID: ptr("desk-app"), Email: ptr("ada@example.com"), LimitKind: &kind, LimitCount: ptr[int64](1), ExpiresAt: &end,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.verdict(t, f.status(t, *v.Key, "ada-laptop")); got.State != "active" {
		t.Fatalf("term verdict state = %s, want active", got.State)
	}
	f.clock.Advance(500 * time.Millisecond)
	if got := f.verdict(t, f.status(t, *v.Key, "ada-laptop")); got.State != "expired" {
		t.Errorf("verdict at the term's end = %s, want expired", got.State)
	}

	// Once the second has passed, an unchanged verdict is signed anew.
	kept := f.status(t, key, "ada-laptop")
	f.clock.Advance(time.Second)
	if got := f.status(t, key, "ada-laptop"); got == kept || f.verdict(t, got).IssuedAt != licentia.FormatTime(f.clock.Now()) {
		t.Errorf("verdict a second later was not signed anew")
	}
}

// hookStore runs before, once, ahead of the next transaction: a change
// that lands between a read and the write that follows it.
type hookStore struct {
	store.Store
	mu     sync.Mutex
	before func()
}

func (s *hookStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	s.mu.Lock()
	before := s.before
	s.before = nil
	s.mu.Unlock()
	if before != nil {
		before()
	}
	return s.Store.InTx(ctx, fn)
}

// TestStatusKeepsRefreshedMachine: a status check refreshing last_seen_at
// never writes back the label, os and app_version it read when an
// activation refreshed them in between.
func TestStatusKeepsRefreshedMachine(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			hs := &hookStore{Store: eng.open(t)}
			f := newFixture(t, hs)
			id, key := f.issue(t, 1)
			if _, err := f.svc.Activate(t.Context(), activate(key, machine("ada-laptop"))); err != nil {
				t.Fatalf("Activate() error = %v", err)
			}
			f.clock.Advance(2 * time.Minute)
			renamed := activation.Machine{ID: "ada-laptop", Label: "Renamed", OS: "linux 7", AppVersion: "3.2.0"}
			hs.before = func() {
				if _, err := f.svc.Activate(t.Context(), activate(key, renamed)); err != nil {
					t.Errorf("Activate() between the read and the write error = %v", err)
				}
			}
			if _, err := f.svc.Status(t.Context(), seat(key, "ada-laptop")); err != nil {
				t.Fatalf("Status() error = %v", err)
			}
			as, err := f.st.Activations(t.Context(), f.org.ID, id)
			if err != nil || len(as) != 1 {
				t.Fatalf("Activations() = %v, %v; want one", as, err)
			}
			got := activation.Machine{ID: as[0].MachineID, Label: as[0].Label, OS: as[0].OS, AppVersion: as[0].AppVersion}
			if !cmp.Equal(got, renamed) {
				t.Errorf("machine after the status check = %+v, want %+v", got, renamed)
			}
			if !as[0].LastSeenAt.Equal(f.clock.Now()) {
				t.Errorf("last_seen_at = %v, want %v", as[0].LastSeenAt, f.clock.Now())
			}
		})
	}
}

// FuzzCheckMachineID holds CheckMachineID's loop to the rule as a regular
// expression states it.
func FuzzCheckMachineID(f *testing.F) {
	rule := regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	for _, id := range []string{"", "a", "AZaz09._:-", "a b", "é", "a\n", strings.Repeat("m", 128), strings.Repeat("m", 129)} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := activation.CheckMachineID(id) == "", rule.MatchString(id); got != want {
			t.Fatalf("CheckMachineID(%q) ok = %v, the expression says %v", id, got, want)
		}
	})
}

// TestCheckMachineFields holds the field rules to the decisions: machine
// ids of 1 to 128 of A-Z a-z 0-9 . _ : -; label, os and app_version of 0
// to 200 characters without control characters.
func TestCheckMachineFields(t *testing.T) {
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{"a", true}, {strings.Repeat("a", 128), true}, {"AZaz09._:-", true},
		{"", false}, {strings.Repeat("a", 129), false}, {"a b", false}, {"a/b", false}, {"é", false}, {"a\n", false},
	} {
		if got := activation.CheckMachineID(tt.id) == ""; got != tt.ok {
			t.Errorf("CheckMachineID(%q) ok = %v, want %v", tt.id, got, tt.ok)
		}
	}
	for _, tt := range []struct {
		s  string
		ok bool
	}{
		{"", true}, {strings.Repeat("é", 200), true}, {"Ada's laptop", true},
		{strings.Repeat("a", 201), false}, {"a\x00", false}, {"a\u0085", false}, {"a\x7f", false},
	} {
		if got := activation.CheckMachineField(tt.s) == ""; got != tt.ok {
			t.Errorf("CheckMachineField(%q) ok = %v, want %v", tt.s, got, tt.ok)
		}
	}
}

// TestRefreshAfterSpreads: each activation has its own fixed refresh
// interval, from 30 seconds to under 60, and activations made together
// spread over the whole range.
func TestRefreshAfterSpreads(t *testing.T) {
	lo, hi := time.Hour, time.Duration(0)
	for range 2000 {
		id := licentia.NewID()
		d := activation.RefreshAfter(id)
		if d < 30*time.Second || d >= 60*time.Second {
			t.Fatalf("RefreshAfter(%s) = %v, want from 30 s to under 60 s", id, d)
		}
		if again := activation.RefreshAfter(id); again != d {
			t.Fatalf("RefreshAfter(%s) = %v, then %v", id, d, again)
		}
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo > 31*time.Second || hi < 59*time.Second {
		t.Errorf("intervals of 2,000 activations from %v to %v, want them spread from 30 s to 60 s", lo, hi)
	}
}

// TestRefreshAfterIsFNV1a: the interval is FNV-1a of the id, the same in
// every process, and a status check pays no allocation for it.
func TestRefreshAfterIsFNV1a(t *testing.T) {
	id := "0b5f6e2a-3c1d-4e8f-9a7b-6c5d4e3f2a1b"
	h := fnv.New32a()
	h.Write([]byte(id))
	if want := 30*time.Second + time.Duration(h.Sum32()%30000)*time.Millisecond; activation.RefreshAfter(id) != want {
		t.Errorf("RefreshAfter(%s) = %v, want %v", id, activation.RefreshAfter(id), want)
	}
	if n := testing.AllocsPerRun(100, func() { activation.RefreshAfter(id) }); n != 0 {
		t.Errorf("RefreshAfter allocates %v times", n)
	}
}

// activate is the request that activates m with key.
func activate(key string, m activation.Machine) activation.Activate {
	return activation.Activate{LicenceKey: &key, MachineID: &m.ID, Label: &m.Label, OS: &m.OS, AppVersion: &m.AppVersion}
}

// seat is the request that names machineID's seat of key.
func seat(key, machineID string) activation.Status {
	return activation.Status{LicenceKey: &key, MachineID: &machineID}
}

// licenceReads counts the reads of a licence made outside a transaction.
type licenceReads struct {
	store.Store
	n atomic.Int64
}

func (r *licenceReads) LicenceByID(ctx context.Context, id string) (*licentia.Licence, error) {
	r.n.Add(1)
	return r.Store.LicenceByID(ctx, id)
}

func (r *licenceReads) Licence(ctx context.Context, orgID, id string) (*licentia.Licence, error) {
	r.n.Add(1)
	return r.Store.Licence(ctx, orgID, id)
}

// TestWritesReadTheLicenceUnderTheLock, on both engines: a new seat, a
// seat held again, a lease and a deactivation read their licence only in
// their transaction, with its lock, and not once before it.
func TestWritesReadTheLicenceUnderTheLock(t *testing.T) {
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			f := newFixture(t, eng.open(t))
			ctx := t.Context()
			reads := &licenceReads{Store: f.st}
			svc := activation.New(activation.Options{Store: reads, Clock: f.clock, Keys: f.keys, Catalogue: f.cat,
				Validity: 7 * 24 * time.Hour, Logger: slog.New(slog.DiscardHandler)})
			id, key := f.issue(t, 2)
			for _, step := range []struct {
				name string
				run  func() error
			}{
				{"new seat", func() error { _, err := svc.Activate(ctx, activate(key, machine("ada-laptop"))); return err }},
				{"seat held again", func() error { _, err := svc.Activate(ctx, activate(key, machine("ada-laptop"))); return err }},
				{"lease", func() error {
					m := "ada-laptop"
					_, err := svc.TakeLease(ctx, activation.TakeLease{LicenceKey: &key, MachineID: &m})
					return err
				}},
				{"deactivation", func() error { _, err := svc.Deactivate(ctx, seat(key, "ada-laptop")); return err }},
			} {
				if err := step.run(); err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				if n := reads.n.Swap(0); n != 0 {
					t.Errorf("%s read the licence %d times outside its transaction, want 0", step.name, n)
				}
			}
			if live := f.liveMachines(t, id); len(live) != 0 {
				t.Errorf("live machines after the deactivation = %v, want none", live)
			}
		})
	}
}

package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// base is the tests' load start.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestLoadSQLite(t *testing.T) {
	testLoad(t, "sqlite:"+filepath.Join(t.TempDir(), "licentia.db"))
}

func TestLoadPostgres(t *testing.T) {
	testLoad(t, storetest.PostgresURL(t))
}

// model is what the database should hold: every licence of the
// organization as last written, and every activation.
type model struct {
	licences    []*licentia.Licence
	activations []*licentia.Activation
}

// testLoad loads a small data set next to a licence written through the
// store, then holds the store's counts, plan count and reads to what the
// generated rows say, before and after a sweep and after changes made
// through the store.
func testLoad(t *testing.T, url string) {
	st := openTestStore(t, url)
	org, p := createFixture(t, st)
	m := &model{}
	m.addThroughStore(t, st, org.ID, p.ID)

	o := options{databaseURL: url, org: org.Slug, product: p.ID, licences: 2000, activations: 6000,
		seed: 7, batch: 700, plans: licentia.DefaultPlans()}
	sum, err := load(t.Context(), o, clock.NewFake(base), io.Discard)
	if err != nil {
		t.Fatalf("load() error = %v", err)
	}
	if sum.licences != o.licences || sum.activations != o.activations {
		t.Errorf("load() wrote %d licences and %d activations, want %d and %d", sum.licences, sum.activations, o.licences, o.activations)
	}
	g := newGenerator(spec{orgID: org.ID, productID: p.ID, major: p.CurrentMajor, machinesPerSeat: p.MachinesPerSeat,
		licences: o.licences, activations: o.activations, seed: o.seed, now: base})
	for n := range o.licences {
		l, as := g.generate(n, nil)
		m.licences = append(m.licences, &l)
		for i := range as {
			m.activations = append(m.activations, &as[i])
		}
	}
	checkMix(t, m, p, o)
	m.checkCounts(t, st, org.ID, p.ID, base)
	m.checkReads(t, st, org.ID)

	// Later, first corrected by the licences expiring past the watermark,
	// then with the sweep moving them.
	later := base.Add(90 * day)
	m.checkCounts(t, st, org.ID, p.ID, later)
	if err := catchUpSweep(t.Context(), st, later); err != nil {
		t.Fatalf("catchUpSweep() error = %v", err)
	}
	m.checkCounts(t, st, org.ID, p.ID, later)

	// Changes through the store move loaded licences off the rows the
	// loader counted them in.
	m.changeThroughStore(t, st, org.ID, later)
	m.checkCounts(t, st, org.ID, p.ID, later)

	_, err = load(t.Context(), o, clock.NewFake(later), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "already holds loaded licences") {
		t.Errorf("second load() error = %v, want a refusal", err)
	}
}

func openTestStore(t testing.TB, url string) store.Store {
	t.Helper()
	st, _, err := openStore(t.Context(), url)
	if err != nil {
		t.Fatalf("openStore() error = %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close() error = %v", err)
		}
	})
	return st
}

// createFixture creates a business organization and a product with a
// signing key, as the storetest suite does.
func createFixture(t testing.TB, st store.Store) (*licentia.Organization, *licentia.Product) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return createFixtureWithKey(t, st, licentia.ProductKey{ID: licentia.NewID(), ProductID: "dataset", PublicKey: pub,
		Fingerprint: "sha256:test", Sealed: []byte("sealed"), MasterFingerprint: "sha256:master", Status: licentia.KeyCurrent})
}

// createFixtureWithKey creates a business organization and its product
// "dataset" with the signing key k.
func createFixtureWithKey(t testing.TB, st store.Store, k licentia.ProductKey) (*licentia.Organization, *licentia.Product) {
	t.Helper()
	org := &licentia.Organization{ID: licentia.NewID(), Name: "Load", Slug: "load", Plan: licentia.PlanBusiness, CreatedAt: base.Add(-2 * year)}
	k.CreatedAt = org.CreatedAt
	p := &licentia.Product{
		ID: "dataset", OrgID: org.ID, Name: "Dataset", KeyPrefix: "DSET", CurrentMajor: 2,
		MachinesPerSeat: licentia.DefaultMachinesPerSeat, LicenceSigningDomain: "licence.example.com",
		VerdictSigningDomain: "verdict.example.com", CreatedAt: org.CreatedAt, UpdatedAt: org.CreatedAt,
		Keys: []licentia.ProductKey{k},
	}
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		if err := tx.CreateOrganization(t.Context(), org); err != nil {
			return err
		}
		return tx.CreateProduct(t.Context(), p)
	})
	if err != nil {
		t.Fatalf("create organization and product: %v", err)
	}
	return org, p
}

// addThroughStore writes a licence of the product with a live machine
// through the store before the load, so its counters exist already.
func (m *model) addThroughStore(t *testing.T, st store.Store, orgID, productID string) {
	t.Helper()
	issued := base.Add(-day)
	l := &licentia.Licence{ID: licentia.NewID(), OrgID: orgID, ProductID: productID, Email: "earlier@example.com",
		IssuedAt: issued, LimitKind: licentia.LimitMachines, LimitCount: 2, Major: 2, Status: licentia.StatusActive,
		Source: licentia.SourceAdmin, CreatedAt: issued, UpdatedAt: issued}
	a := &licentia.Activation{ID: licentia.NewID(), OrgID: orgID, LicenceID: l.ID, MachineID: "earlier-m0",
		ActivatedAt: issued, LastSeenAt: issued}
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		if err := tx.CreateLicence(t.Context(), l); err != nil {
			return err
		}
		return tx.CreateActivation(t.Context(), a)
	})
	if err != nil {
		t.Fatalf("write a licence through the store: %v", err)
	}
	l.LiveActivations = 1
	m.licences, m.activations = append(m.licences, l), append(m.activations, a)
}

// changeThroughStore frees a live machine of a licence taking a place and
// revokes another licence taking a place, through the store, as the
// service's routes do.
func (m *model) changeThroughStore(t *testing.T, st store.Store, orgID string, now time.Time) {
	t.Helper()
	var freed *licentia.Activation
	var revoked *licentia.Licence
	for _, l := range m.licences {
		if !l.CountsInPlan(now) || l.LiveActivations == 0 {
			continue
		}
		if freed == nil {
			freed = m.liveActivation(l.ID)
		} else if l.ID != freed.LicenceID {
			revoked = l
			break
		}
	}
	if freed == nil || revoked == nil {
		t.Fatal("no licences to change")
	}
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		if _, _, err := tx.DeactivateActivation(t.Context(), orgID, freed.ID, now); err != nil {
			return err
		}
		after, err := tx.LockLicence(t.Context(), orgID, revoked.ID)
		if err != nil {
			return err
		}
		after.Status, after.StatusReason, after.StatusChangedAt, after.UpdatedAt = licentia.StatusRevoked, ptr("Test."), &now, now
		return tx.UpdateLicence(t.Context(), after)
	})
	if err != nil {
		t.Fatalf("change loaded licences through the store: %v", err)
	}
	freed.DeactivatedAt = &now
	for _, l := range m.licences {
		if l.ID == freed.LicenceID {
			l.LiveActivations--
		}
	}
	revoked.Status, revoked.StatusReason, revoked.StatusChangedAt, revoked.UpdatedAt = licentia.StatusRevoked, ptr("Test."), &now, now
}

func (m *model) liveActivation(licenceID string) *licentia.Activation {
	for _, a := range m.activations {
		if a.LicenceID == licenceID && a.IsLive() {
			return a
		}
	}
	return nil
}

// checkMix holds the generated rows to the package comment's promises.
func checkMix(t *testing.T, m *model, p *licentia.Product, o options) {
	t.Helper()
	live := map[string]int64{}
	total := 0
	for _, a := range m.activations {
		if strings.HasPrefix(a.MachineID, "load-") {
			total++
		}
		if a.IsLive() {
			live[a.LicenceID]++
		}
	}
	if total != o.activations {
		t.Errorf("generated %d activations, want %d", total, o.activations)
	}
	places := 0
	for _, l := range m.licences[1:] {
		if live[l.ID] != l.LiveActivations {
			t.Errorf("licence %s live_activations = %d, want %d live rows", l.Email, l.LiveActivations, live[l.ID])
		}
		if allowed := l.MachinesAllowed(p.MachinesPerSeat); l.LiveActivations > allowed {
			t.Errorf("licence %s has %d live machines, allows %d", l.Email, l.LiveActivations, allowed)
		}
		if l.CountsInPlan(base) {
			places++
		}
	}
	if share := float64(places) / float64(o.licences); share < 0.65 || share > 0.85 {
		t.Errorf("%.2f of loaded licences take a place in the plan, want 0.65 to 0.85", share)
	}
}

// checkCounts compares the store's counts and plan count with a count of
// every licence by the contract's rules.
func (m *model) checkCounts(t *testing.T, st store.Store, orgID, productID string, now time.Time) {
	t.Helper()
	since := now.Add(-30 * day)
	for _, product := range []*string{nil, &productID} {
		got, err := st.CountLicences(t.Context(), orgID, product, since, now)
		if err != nil {
			t.Fatalf("CountLicences() error = %v", err)
		}
		live := map[string]int64{}
		for _, l := range m.licences {
			live[l.ID] = l.LiveActivations
		}
		if diff := gocmp.Diff(storetest.BruteCounts(m.licences, live, orgID, product, since, now), *got); diff != "" {
			t.Errorf("CountLicences(%s) mismatch (-want +got):\n%s", licentia.FormatTime(now), diff)
		}
	}
	got, err := st.PlanLicenceCount(t.Context(), orgID, now)
	if err != nil {
		t.Fatalf("PlanLicenceCount() error = %v", err)
	}
	var want int64
	for _, l := range m.licences {
		if l.CountsInPlan(now) {
			want++
		}
	}
	if got != want {
		t.Errorf("PlanLicenceCount(%s) = %d, want %d", licentia.FormatTime(now), got, want)
	}
}

// checkReads reads every licence and its activations back through the
// store, and finds one by email as the load generator does.
func (m *model) checkReads(t *testing.T, st store.Store, orgID string) {
	t.Helper()
	byLicence := map[string][]licentia.Activation{}
	for _, a := range m.activations {
		byLicence[a.LicenceID] = append(byLicence[a.LicenceID], *a)
	}
	for _, want := range m.licences {
		got, err := st.Licence(t.Context(), orgID, want.ID)
		if err != nil {
			t.Fatalf("Licence(%s) error = %v", want.Email, err)
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Fatalf("Licence(%s) mismatch (-want +got):\n%s", want.Email, diff)
		}
		acts := byLicence[want.ID]
		slices.SortFunc(acts, func(a, b licentia.Activation) int { // live first
			if a.IsLive() != b.IsLive() {
				if a.IsLive() {
					return -1
				}
				return 1
			}
			return cmp.Or(a.ActivatedAt.Compare(b.ActivatedAt), cmp.Compare(a.ID, b.ID))
		})
		gotActs, err := st.Activations(t.Context(), orgID, want.ID)
		if err != nil {
			t.Fatalf("Activations(%s) error = %v", want.Email, err)
		}
		if diff := gocmp.Diff(acts, gotActs); diff != "" {
			t.Fatalf("Activations(%s) mismatch (-want +got):\n%s", want.Email, diff)
		}
	}
	email := fmt.Sprintf(emailFormat, 123)
	found, err := st.FindLicences(t.Context(), orgID, store.LicenceFilter{Email: &email, Limit: 10}, base)
	if err != nil || len(found) != 1 || found[0].ID != m.licences[1+123].ID {
		t.Errorf("FindLicences(%s) = %d licences, %v; want licence 123", email, len(found), err)
	}
	if m.licences[1+123].Email != email || *m.licences[1+123].ExternalRef != "load-0000123" {
		t.Errorf("licence 123 is %s, %s", m.licences[1+123].Email, *m.licences[1+123].ExternalRef)
	}
}

// TestSweepLockKey: a batch takes the lock the PostgreSQL engine's sweeper
// takes, so no sweep moves the watermark while a batch is counted under it.
func TestSweepLockKey(t *testing.T) {
	url := storetest.PostgresURL(t)
	st := openTestStore(t, url)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	err = st.InTx(t.Context(), func(tx store.Tx) error {
		if _, err := tx.SweepLicences(t.Context(), base, 1); err != nil {
			return err
		}
		var free bool
		err := conn.QueryRow(t.Context(), `SELECT pg_try_advisory_xact_lock_shared(`+postgres.SweepLockKey+`)`).Scan(&free)
		if free {
			t.Error("the sweep lock of a batch is free while a sweep runs")
		}
		return err
	})
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
}

// TestRun loads through the command line and refuses a second load of the
// same product.
func TestRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "licentia.db")
	st := openTestStore(t, "sqlite:"+path)
	createFixture(t, st)
	args := []string{"-database-url", "sqlite:" + path, "-org", "load", "-product", "dataset", "-licences", "300", "-activations", "900", "-batch", "128"}
	getenv := func(string) string { return "" }
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), args, &stdout, &stderr, getenv); err != nil {
		t.Fatalf("run() error = %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "loaded 300 licences and 900 activations") {
		t.Errorf("run() summary = %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "300/300 licences") {
		t.Errorf("run() progress = %q", stderr.String())
	}
	err := run(t.Context(), args, io.Discard, io.Discard, getenv)
	if err == nil || !strings.Contains(err.Error(), "already holds loaded licences") {
		t.Errorf("second run() error = %v, want a refusal", err)
	}
}

func TestRunRefusesFlags(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no org", []string{"-product", "p"}, "-org is required"},
		{"no product", []string{"-org", "o"}, "-product is required"},
		{"no licences", []string{"-org", "o", "-product", "p", "-licences", "0"}, "-licences"},
		{"too many licences", []string{"-org", "o", "-product", "p", "-licences", "10000001"}, "-licences"},
		{"negative activations", []string{"-org", "o", "-product", "p", "-activations", "-1"}, "-activations"},
		{"no batch", []string{"-org", "o", "-product", "p", "-batch", "0"}, "-batch"},
		{"argument", []string{"-org", "o", "-product", "p", "extra"}, "unexpected argument"},
		{"database", []string{"-org", "o", "-product", "p", "-database-url", "mysql://x"}, "sqlite:PATH or postgres://"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t.Context(), tt.args, io.Discard, io.Discard, func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%q) error = %v, want %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestRunRefusesPastPlan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "licentia.db")
	st := openTestStore(t, "sqlite:"+path)
	org, p := createFixture(t, st)
	plans := licentia.DefaultPlans()
	plans[licentia.PlanBusiness] = licentia.Limits{ActiveLicences: 100}
	o := options{databaseURL: "sqlite:" + path, org: org.Slug, product: p.ID, licences: 200, activations: 0, seed: 1, batch: 50, plans: plans}
	_, err := load(t.Context(), o, clock.NewFake(base), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "past its plan") {
		t.Errorf("load() error = %v, want a plan refusal", err)
	}
	n, err := st.PlanLicenceCount(t.Context(), org.ID, base)
	if err != nil || n != 0 {
		t.Errorf("PlanLicenceCount() = %d, %v; want nothing loaded", n, err)
	}
}

// TestGenerateDeterministic: a licence depends on the seed, organization,
// product and its number only, not on what was generated before.
func TestGenerateDeterministic(t *testing.T) {
	s := spec{orgID: licentia.NewID(), productID: "dataset", major: 1, machinesPerSeat: 3, licences: 50, activations: 150, seed: 3, now: base}
	a, b := newGenerator(s), newGenerator(s)
	b.generate(0, nil)
	for _, n := range []int{0, 17, 49} {
		la, aa := a.generate(n, nil)
		lb, ab := b.generate(n, nil)
		if diff := gocmp.Diff(la, lb); diff != "" {
			t.Errorf("licence %d differs (-first +second):\n%s", n, diff)
		}
		if diff := gocmp.Diff(aa, ab); diff != "" {
			t.Errorf("activations of %d differ (-first +second):\n%s", n, diff)
		}
	}
	other := s
	other.productID = "other"
	la, _ := a.generate(0, nil)
	lo, _ := newGenerator(other).generate(0, nil)
	if la.ID == lo.ID {
		t.Errorf("two products share licence id %s", la.ID)
	}
	elsewhere := s
	elsewhere.orgID = licentia.NewID()
	if le, _ := newGenerator(elsewhere).generate(0, nil); le.ID != la.ID || !le.IssuedAt.Equal(la.IssuedAt) {
		t.Errorf("the same product in another database generates licence %s issued %s, want %s issued %s", le.ID, le.IssuedAt, la.ID, la.IssuedAt)
	}
	if id, ok := licentia.ParseUUID(la.ID); !ok || id != la.ID || la.ID[14] != '4' {
		t.Errorf("licence id %q is not a lower-case version 4 UUID", la.ID)
	}
}

func TestActivationCount(t *testing.T) {
	for _, tt := range []struct{ licences, activations int }{
		{1, 0}, {1, 5}, {2, 6}, {7, 21}, {1001, 3000}, {1000, 3001}, {999, 10}, {10, 1000},
	} {
		g := newGenerator(spec{licences: tt.licences, activations: tt.activations, machinesPerSeat: 3, seed: 1})
		total := 0
		for n := range tt.licences {
			c := g.activationCount(n)
			if c < 0 {
				t.Errorf("%d licences, %d activations: licence %d gets %d", tt.licences, tt.activations, n, c)
			}
			total += c
		}
		if total != tt.activations {
			t.Errorf("%d licences: %d activations in all, want %d", tt.licences, total, tt.activations)
		}
	}
}

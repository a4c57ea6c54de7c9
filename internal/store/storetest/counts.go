package storetest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// BruteCounts computes the counts of GET /v1/admin/licences/counts from
// every licence, by the contract's rules: what counters and the sweeper
// must reproduce.
func BruteCounts(ls []*licentia.Licence, live map[string]int64, orgID string, productID *string, since, now time.Time) store.LicenceCounts {
	var c store.LicenceCounts
	for _, l := range ls {
		if l.OrgID != orgID || (productID != nil && l.ProductID != *productID) {
			continue
		}
		c.All++
		switch l.DerivedState(now) {
		case licentia.StateActive:
			c.Active++
			c.LiveMachines += live[l.ID]
		case licentia.StateTrial:
			c.Trial++
			c.LiveMachines += live[l.ID]
		case licentia.StateExpired:
			c.Expired++
		case licentia.StateRevoked:
			c.Revoked++
		}
		switch l.Term() {
		case licentia.TermPerpetual:
			c.Perpetual++
		case licentia.TermTerm:
			c.Term++
		case licentia.TermSubscription:
			c.Subscription++
		}
		if l.Source == licentia.SourceProvider {
			c.Provider++
		} else {
			c.Admin++
		}
		if !l.IssuedAt.Before(since) {
			c.IssuedSince++
		}
		if l.Status == licentia.StatusRevoked && l.StatusChangedAt != nil && !l.StatusChangedAt.Before(since) {
			c.RevokedSince++
		}
	}
	return c
}

// brutePlanCount counts the licences taking a place in the plan.
func brutePlanCount(ls []*licentia.Licence, orgID string, now time.Time) int64 {
	var n int64
	for _, l := range ls {
		if l.OrgID == orgID && l.CountsInPlan(now) {
			n++
		}
	}
	return n
}

// countModel is what a store should hold, kept in Go: every licence as
// last written, and the live activations of each.
type countModel struct {
	t        *testing.T
	s        store.Store
	rng      *rand.Rand
	orgs     []string
	products map[string][]string // by organization
	// alsoAsked are products counted under an organization besides those
	// its licences are drawn from: one holding none, and another
	// organization's, whose licences must not count.
	alsoAsked map[string][]string
	// seen notes, by product, the cases its counts were checked with.
	seen     map[string]map[string]bool
	licences []*licentia.Licence
	live     map[string][]*licentia.Activation
	freed    []*licentia.Activation
	machines int
}

// instants are the times expiries, issues and changes are drawn from: a few
// shared instants, a millisecond apart at base, so that boundaries and
// licences expiring together are common. One is finer than a millisecond:
// stores keep it as base, and must count it as they keep it.
var instants = []time.Time{
	base.Add(-2 * time.Hour), base.Add(-time.Hour), base.Add(-time.Millisecond), base, base.Add(time.Millisecond / 2),
	base.Add(time.Millisecond), base.Add(time.Hour), base.Add(2 * time.Hour), base.Add(4 * time.Hour),
}

func (m *countModel) instant() time.Time { return instants[m.rng.IntN(len(instants))] }

func (m *countModel) chance(percent int) bool { return m.rng.IntN(100) < percent }

func (m *countModel) liveCounts() map[string]int64 {
	out := make(map[string]int64, len(m.live))
	for id, as := range m.live {
		out[id] = int64(len(as))
	}
	return out
}

// newLicence draws a licence: any product, source, term, trial and status.
// A trial ends when it expires, as every trial the service issues does.
func (m *countModel) newLicence(orgID string) *licentia.Licence {
	products := m.products[orgID]
	l := newLicence(orgID, products[m.rng.IntN(len(products))], fmt.Sprintf("c%d@example.com", len(m.licences)), m.instant())
	if m.chance(30) {
		l.Source = licentia.SourceProvider
		if m.chance(50) {
			l.Provider.SubscriptionID = ptr("sub_" + strconv.Itoa(len(m.licences)))
		}
		if m.chance(40) {
			l.SubscriptionEndedAt = ptr(base.Add([]time.Duration{-31 * 24 * time.Hour, -29 * 24 * time.Hour, -time.Hour, time.Hour}[m.rng.IntN(4)]))
		}
	}
	if m.chance(70) {
		l.ExpiresAt = ptr(m.instant())
		if m.chance(30) {
			l.TrialEndsAt = l.ExpiresAt
		}
	}
	switch n := m.rng.IntN(100); {
	case n < 15:
		l.Status, l.StatusChangedAt = licentia.StatusRevoked, ptr(m.instant())
	case n < 30:
		l.Status, l.StatusChangedAt = licentia.StatusExpired, ptr(m.instant())
	}
	m.licences = append(m.licences, stored(l))
	return l
}

// issue stores n new licences in one transaction, most of them in the first
// organization.
func (m *countModel) issue(n int) {
	var ls []*licentia.Licence
	for i := range n {
		ls = append(ls, m.newLicence(m.orgs[min(i/8, 1)]))
	}
	createLicences(m.t, m.s, ls...)
}

// step makes one random change through the store and the model alike.
func (m *countModel) step() {
	t, ctx := m.t, m.t.Context()
	l := m.licences[m.rng.IntN(len(m.licences))]
	switch op := m.rng.IntN(10); op {
	case 0, 1, 2:
		m.activate(l)
	case 3:
		m.deactivate()
	case 4:
		status := []licentia.Status{licentia.StatusActive, licentia.StatusRevoked, licentia.StatusExpired}[m.rng.IntN(3)]
		at := m.instant()
		m.update(l, func(u *licentia.Licence) { u.Status, u.StatusChangedAt, u.StatusReason = status, &at, ptr("why") })
	case 5:
		expires := ptr(m.instant())
		if m.chance(20) && l.TrialEndsAt == nil {
			expires = nil
		}
		m.update(l, func(u *licentia.Licence) {
			u.ExpiresAt = expires
			if u.TrialEndsAt != nil {
				u.TrialEndsAt = expires
			}
		})
	case 6:
		m.update(l, func(u *licentia.Licence) { u.TrialEndsAt = nil })
	case 7:
		m.update(l, func(u *licentia.Licence) { u.SubscriptionEndedAt = ptr(m.instant()) })
	case 8:
		m.anonymise(l)
	case 9:
		// A machine already live on the licence: conflict, nothing counted.
		if as := m.live[l.ID]; len(as) > 0 {
			a := newActivation(l, as[0].MachineID)
			err := m.s.InTx(ctx, func(tx store.Tx) error { return tx.CreateActivation(ctx, a) })
			wantCode(t, "CreateActivation(live machine)", err, licentia.CodeConflict)
		}
	}
}

func (m *countModel) activate(l *licentia.Licence) {
	machine := fmt.Sprintf("machine-%d", m.machines)
	m.machines++
	// Sometimes a freed machine of the licence comes back: a new activation.
	for i, a := range m.freed {
		if a.LicenceID == l.ID && !m.isLive(l.ID, a.MachineID) && m.chance(50) {
			machine = a.MachineID
			m.freed = append(m.freed[:i], m.freed[i+1:]...)
			break
		}
	}
	a := newActivation(l, machine)
	createActivations(m.t, m.s, a)
	m.live[l.ID] = append(m.live[l.ID], a)
}

func (m *countModel) isLive(licenceID, machine string) bool {
	for _, a := range m.live[licenceID] {
		if a.MachineID == machine {
			return true
		}
	}
	return false
}

// deactivate frees the oldest live machine of a random licence holding
// some, drawn in the order of m.licences so that the seed decides which.
func (m *countModel) deactivate() {
	var holding []string
	for _, l := range m.licences {
		if len(m.live[l.ID]) > 0 {
			holding = append(holding, l.ID)
		}
	}
	if len(holding) == 0 {
		return
	}
	id := holding[m.rng.IntN(len(holding))]
	as := m.live[id]
	a := as[0]
	var changed bool
	inTx(m.t, m.s, func(tx store.Tx) error {
		var err error
		_, changed, err = tx.DeactivateActivation(m.t.Context(), a.OrgID, a.ID, m.instant())
		return err
	})
	if !changed {
		m.t.Errorf("DeactivateActivation(live) changed = false, want true")
	}
	m.live[id], m.freed = as[1:], append(m.freed, a)
}

func (m *countModel) update(l *licentia.Licence, change func(u *licentia.Licence)) {
	after := updateLicence(m.t, m.s, l.OrgID, l.ID, change)
	*l = *stored(after)
}

// anonymise does what the anonymise operation does, passing UpdateLicence
// the licence as LockLicence read it, before its machines were freed.
func (m *countModel) anonymise(l *licentia.Licence) {
	ctx := m.t.Context()
	now := m.instant()
	var after licentia.Licence
	inTx(m.t, m.s, func(tx store.Tx) error {
		before, err := tx.LockLicence(ctx, l.OrgID, l.ID)
		if err != nil {
			return err
		}
		if err := tx.AnonymiseActivations(ctx, l.OrgID, l.ID, now); err != nil {
			return err
		}
		after = *before
		after.Email, after.AnonymisedAt = l.ID+"@"+licentia.AnonymisedDomain, &now
		if after.Status == licentia.StatusActive {
			after.Status, after.StatusChangedAt = licentia.StatusRevoked, &now
		}
		return tx.UpdateLicence(ctx, &after)
	})
	*l = *stored(&after)
	m.live[l.ID] = nil
}

// sinces are the since values counts are asked with: before every issue
// and change, between them, at the instants some share, and after all.
var sinces = []time.Time{
	base.Add(-3 * time.Hour), base.Add(-90 * time.Minute), base.Add(-time.Millisecond), base,
	base.Add(time.Millisecond), base.Add(3 * time.Hour), base.Add(5 * time.Hour),
}

// check compares every count with the brute-force one, for each
// organization and product, at now values around every boundary. Each
// organization and product is asked with every since in turn.
func (m *countModel) check(label string, nows ...time.Time) {
	t, ctx := m.t, m.t.Context()
	t.Helper()
	live := m.liveCounts()
	m.noteVariety(live)
	for _, orgID := range m.orgs {
		products := append([]*string{nil}, ptrs(append(m.products[orgID], m.alsoAsked[orgID]...))...)
		for j, now := range nows {
			for i, productID := range products {
				since := sinces[(i+j)%len(sinces)]
				want := BruteCounts(m.licences, live, orgID, productID, since, now)
				got, err := m.s.CountLicences(ctx, orgID, productID, since, now)
				if err != nil {
					t.Fatalf("%s: CountLicences() error = %v", label, err)
				}
				if diff := cmp.Diff(want, *got); diff != "" {
					t.Errorf("%s: CountLicences(product %v, since %s, now %s) mismatch (-brute force +got):\n%s",
						label, deref(productID), since.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano), diff)
				}
			}
			want := brutePlanCount(m.licences, orgID, now)
			if got, err := m.s.PlanLicenceCount(ctx, orgID, now); got != want || err != nil {
				t.Errorf("%s: PlanLicenceCount(now %s) = %d, %v, want %d", label, now.Format(time.RFC3339Nano), got, err, want)
			}
		}
	}
}

// checkStored compares every licence the store holds with the model.
func (m *countModel) checkStored() {
	m.t.Helper()
	for _, l := range m.licences {
		want := *l
		want.LiveActivations = int64(len(m.live[l.ID]))
		got := readLicence(m.t, m.s, l.OrgID, l.ID)
		if diff := cmp.Diff(&want, got); diff != "" {
			m.t.Errorf("Licence(%s) mismatch with the model (-want +got):\n%s", l.Email, diff)
		}
	}
}

// sweep runs SweepLicences until the watermark reaches now.
func (m *countModel) sweep(now time.Time, batch int) {
	m.t.Helper()
	for range 1000 {
		inTx(m.t, m.s, func(tx store.Tx) error {
			_, err := tx.SweepLicences(m.t.Context(), now, batch)
			return err
		})
		if w := watermark(m.t, m.s); !w.Before(now) {
			return
		}
	}
	m.t.Fatalf("SweepLicences(%s, %d) never reached now", now, batch)
}

// noteVariety notes the cases the licences of each product hold at base.
func (m *countModel) noteVariety(live map[string]int64) {
	if m.seen == nil {
		m.seen = map[string]map[string]bool{}
	}
	for _, l := range m.licences {
		seen := m.seen[l.ProductID]
		if seen == nil {
			seen = map[string]bool{}
			m.seen[l.ProductID] = seen
		}
		state := l.DerivedState(base)
		seen[string(state)] = true
		seen[string(l.Term())] = true
		seen[string(l.Source)] = true
		seen["lapsed"] = seen["lapsed"] || (l.Status == licentia.StatusActive && state == licentia.StateExpired)
		seen["anonymised"] = seen["anonymised"] || l.AnonymisedAt != nil
		seen["live machines"] = seen["live machines"] || (live[l.ID] > 0 && (state == licentia.StateActive || state == licentia.StateTrial))
	}
}

// checkVariety fails the test when the licences of a product of the first
// organization held no case its counts must get right at any check, so
// that a change of the random mix cannot quietly leave the counts of one
// product untested.
func (m *countModel) checkVariety() {
	m.t.Helper()
	for _, productID := range m.products[m.orgs[0]] {
		for _, want := range []string{"active", "trial", "expired", "revoked", "lapsed", "perpetual", "term", "subscription",
			"admin", "provider", "anonymised", "live machines"} {
			if !m.seen[productID][want] {
				m.t.Errorf("product %s held no licence that is %s at base: the counts of one product go untested there", productID, want)
			}
		}
	}
}

func ptrs(ss []string) []*string {
	out := make([]*string, len(ss))
	for i := range ss {
		out[i] = &ss[i]
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return "<all>"
	}
	return *s
}

// testCountLicences holds CountLicences and PlanLicenceCount to a brute-force
// count over a random mix of licences and changes, before and after sweeps,
// with the watermark behind and ahead of now, and sweeps in small batches;
// for each organization, each product, a product with no licences and
// another organization's product.
func testCountLicences(t *testing.T, s store.Store) {
	o, p1 := licenceSetup(t, s, "acme")
	p2 := newProduct(o.ID, "acme-two", "ACMETWO")
	createProducts(t, s, p2)
	empty := newProduct(o.ID, "acme-empty", "ACMEEMPTY")
	createProducts(t, s, empty)
	other, theirProduct := licenceSetup(t, s, "other")
	m := &countModel{
		t: t, s: s, rng: rand.New(rand.NewPCG(2026, 3)), orgs: []string{o.ID, other.ID},
		products:  map[string][]string{o.ID: {p1.ID, p2.ID}, other.ID: {theirProduct.ID}},
		alsoAsked: map[string][]string{o.ID: {empty.ID, theirProduct.ID}, other.ID: {p1.ID}},
		live:      map[string][]*licentia.Activation{},
	}
	for range 6 {
		m.issue(10)
	}
	nows := []time.Time{base.Add(-2*time.Hour - time.Millisecond), base.Add(-time.Hour), base.Add(-time.Millisecond), base, base.Add(time.Millisecond / 2),
		base.Add(time.Millisecond), base.Add(90 * time.Minute), base.Add(5 * time.Hour)}
	m.check("created", nows...)
	for range 60 {
		m.step()
	}
	m.check("changed", nows...)
	m.sweep(base, 1000)
	m.check("swept to base", nows...)
	m.issue(10)
	for range 40 {
		m.step()
	}
	m.check("changed after a sweep", nows...)
	// The watermark ahead of the times counted at.
	m.sweep(base.Add(3*time.Hour), 1000)
	m.check("swept ahead", nows...)
	m.issue(10)
	for range 40 {
		m.step()
	}
	m.check("changed with the watermark ahead", nows...)
	m.sweep(base.Add(5*time.Hour), 3)
	m.check("swept in batches of 3", nows...)
	m.checkStored()
	m.checkVariety()
}

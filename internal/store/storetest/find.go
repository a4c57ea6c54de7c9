package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// everyLicence is a q that matches every licence: each email starts with
// the empty prefix.
var everyLicence = ptr("")

// newestFirst orders licences as FindLicences does: issued_at, then id,
// descending.
func newestFirst(ls []*licentia.Licence) []string {
	ls = slices.Clone(ls)
	slices.SortFunc(ls, func(a, b *licentia.Licence) int {
		return cmp.Or(b.IssuedAt.Compare(a.IssuedAt), cmp.Compare(b.ID, a.ID))
	})
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.ID
	}
	return ids
}

func licenceIDs(ls []licentia.Licence) []string {
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.ID
	}
	return ids
}

func matching(ls []*licentia.Licence, keep func(l *licentia.Licence) bool) []*licentia.Licence {
	var out []*licentia.Licence
	for _, l := range ls {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}

type findCase struct {
	name string
	f    store.LicenceFilter
	want []*licentia.Licence
}

// testFindLicences tries each filter alone and some together, on licences
// of every state, term and source, with an organization next door holding
// the same address.
func testFindLicences(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p1 := licenceSetup(t, s, "acme")
	p2 := newProduct(o.ID, "acme-two", "ACMETWO")
	createProducts(t, s, p2)
	other, theirProduct := licenceSetup(t, s, "other")
	now := base
	issued := func(h int) time.Time { return base.Add(-time.Duration(h) * time.Hour) }

	active := newLicence(o.ID, p1.ID, "Alice@Example.com", issued(1))
	active.ID = seqID(2)
	sameInstant := newLicence(o.ID, p1.ID, "alice.b@example.com", issued(1))
	sameInstant.ID = seqID(1)
	term := newLicence(o.ID, p2.ID, "alice@example.com", issued(2))
	term.ExpiresAt, term.Source, term.ExternalRef = ptr(now.Add(24*time.Hour)), licentia.SourceProvider, ptr("REF-1")
	trial := newLicence(o.ID, p1.ID, "alicia@example.org", issued(3))
	trial.ExpiresAt, trial.TrialEndsAt = ptr(now.Add(7*24*time.Hour)), ptr(now.Add(7*24*time.Hour))
	subscription := newLicence(o.ID, p1.ID, "bob@example.com", issued(4))
	subscription.Status, subscription.Source, subscription.ExternalRef = licentia.StatusExpired, licentia.SourceProvider, ptr("ref-1")
	subscription.ExpiresAt, subscription.Provider.SubscriptionID = ptr(now.Add(30*24*time.Hour)), ptr("sub_1")
	revoked := newLicence(o.ID, p2.ID, "carol@example.com", issued(5))
	revoked.Status = licentia.StatusRevoked
	lapsed := newLicence(o.ID, p1.ID, "dave@example.com", issued(6))
	lapsed.ExpiresAt, lapsed.ExternalRef = ptr(now.Add(-time.Hour)), ptr(" REF-1")
	// "ÿ" is C3 BF in UTF-8: raising its last byte would be no valid bound.
	yves := newLicence(o.ID, p1.ID, "ÿves@example.com", issued(7))
	amos := newLicence(o.ID, p1.ID, "Āmos@example.com", issued(8))
	all := []*licentia.Licence{active, sameInstant, term, trial, subscription, revoked, lapsed, yves, amos}
	createLicences(t, s, all...)
	createLicences(t, s, newLicence(other.ID, theirProduct.ID, "alice@example.com", issued(1)))

	type filter = store.LicenceFilter
	cases := []findCase{
		{"email any case", filter{Email: ptr("ALICE@example.COM")}, []*licentia.Licence{active, term}},
		{"email is whole", filter{Email: ptr("alice@example")}, nil},
		{"q prefix", filter{Q: ptr("ali")}, []*licentia.Licence{active, sameInstant, term, trial}},
		{"q prefix any case", filter{Q: ptr("ALICE")}, []*licentia.Licence{active, sameInstant, term}},
		{"q whole email", filter{Q: ptr("alice@example.com")}, []*licentia.Licence{active, term}},
		{"q non-ASCII prefix", filter{Q: ptr("ÿ")}, []*licentia.Licence{yves}},
		{"q non-ASCII any case", filter{Q: ptr("ā")}, []*licentia.Licence{amos}},
		{"q id", filter{Q: &trial.ID}, []*licentia.Licence{trial}},
		{"q id upper case", filter{Q: ptr(strings.ToUpper(trial.ID))}, nil},
		{"q external_ref", filter{Q: ptr("REF-1")}, []*licentia.Licence{term}},
		{"q external_ref is case-sensitive", filter{Q: ptr("ref-1")}, []*licentia.Licence{subscription}},
		{"q external_ref is not trimmed", filter{Q: ptr(" REF-1")}, []*licentia.Licence{lapsed}},
		{"q external_ref trailing space", filter{Q: ptr("REF-1 ")}, nil},
		{"q licence key", filter{QLicenceID: &term.ID}, []*licentia.Licence{term}},
		{"q licence key and email", filter{QLicenceID: &term.ID, Email: ptr("bob@example.com")}, nil},
		{"q and product", filter{Q: ptr("ali"), ProductID: &p1.ID}, []*licentia.Licence{active, sameInstant, trial}},
		{"external_ref on product", filter{ExternalRef: ptr("REF-1"), ProductID: &p2.ID}, []*licentia.Licence{term}},
		{"external_ref on another product", filter{ExternalRef: ptr("REF-1"), ProductID: &p1.ID}, nil},
		{"email, state and source", filter{Email: ptr("alice@example.com"), State: ptr(licentia.StateActive), Source: ptr(licentia.SourceProvider)},
			[]*licentia.Licence{term}},
		{"q, status and term", filter{Q: ptr("ali"), Status: ptr(licentia.StatusActive), Term: ptr(licentia.TermTerm)},
			[]*licentia.Licence{term, trial}},
	}
	for _, p := range []string{p1.ID, p2.ID} {
		cases = append(cases, findCase{"product " + p, filter{Q: everyLicence, ProductID: &p}, matching(all, func(l *licentia.Licence) bool { return l.ProductID == p })})
	}
	for _, st := range []licentia.State{licentia.StateActive, licentia.StateTrial, licentia.StateExpired, licentia.StateRevoked} {
		cases = append(cases, findCase{"state " + string(st), filter{Q: everyLicence, State: &st}, matching(all, func(l *licentia.Licence) bool { return l.DerivedState(now) == st })})
	}
	for _, st := range []licentia.Status{licentia.StatusActive, licentia.StatusRevoked, licentia.StatusExpired} {
		cases = append(cases, findCase{"status " + string(st), filter{Q: everyLicence, Status: &st}, matching(all, func(l *licentia.Licence) bool { return l.Status == st })})
	}
	for _, term := range []licentia.Term{licentia.TermPerpetual, licentia.TermTerm, licentia.TermSubscription} {
		cases = append(cases, findCase{"term " + string(term), filter{Q: everyLicence, Term: &term}, matching(all, func(l *licentia.Licence) bool { return l.Term() == term })})
	}
	for _, src := range []licentia.Source{licentia.SourceAdmin, licentia.SourceProvider} {
		cases = append(cases, findCase{"source " + string(src), filter{Q: everyLicence, Source: &src}, matching(all, func(l *licentia.Licence) bool { return l.Source == src })})
	}
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		for _, tt := range cases {
			tt.f.Limit = 100
			got, err := r.FindLicences(ctx, o.ID, tt.f, now)
			if diff := gocmp.Diff(newestFirst(tt.want), licenceIDs(got)); diff != "" || err != nil {
				t.Errorf("FindLicences(%s) error = %v, ids mismatch (-want +got):\n%s", tt.name, err, diff)
			}
		}
		// Newest first, the id breaking the tie; Limit keeps the first.
		got, err := r.FindLicences(ctx, o.ID, store.LicenceFilter{Q: everyLicence, Limit: 3}, now)
		if diff := gocmp.Diff(newestFirst(all)[:3], licenceIDs(got)); diff != "" || err != nil {
			t.Errorf("FindLicences(limit 3) error = %v, ids mismatch (-want +got):\n%s", err, diff)
		}
	})
}

// testDerivedStateBoundaries is the test that holds the derived-state SQL
// (store.StateSQL) to the Go rule (licentia.Licence.DerivedState) at and
// around the instants where states change: an expiry exactly at now is
// expired, a trial ending exactly at now is no longer a trial, a stored
// revoked or expired licence stays so whatever its expiry and trial end.
func testDerivedStateBoundaries(t *testing.T, s store.Store) {
	o, p := licenceSetup(t, s, "acme")
	edge := base
	var all []*licentia.Licence
	add := func(email string, change func(l *licentia.Licence)) {
		l := newLicence(o.ID, p.ID, email, base.Add(-time.Duration(len(all))*time.Minute))
		change(l)
		all = append(all, l)
	}
	add("perpetual@example.com", func(*licentia.Licence) {})
	add("expiring@example.com", func(l *licentia.Licence) { l.ExpiresAt = &edge })
	add("trial@example.com", func(l *licentia.Licence) { l.ExpiresAt, l.TrialEndsAt = &edge, &edge })
	add("trial-open@example.com", func(l *licentia.Licence) { l.TrialEndsAt = &edge })
	add("trial-longer@example.com", func(l *licentia.Licence) { l.TrialEndsAt, l.ExpiresAt = &edge, ptr(edge.Add(time.Hour)) })
	add("trial-ended@example.com", func(l *licentia.Licence) { l.TrialEndsAt = ptr(edge.Add(-time.Hour)) })
	add("trial-past-expiry@example.com", func(l *licentia.Licence) { l.ExpiresAt, l.TrialEndsAt = &edge, ptr(edge.Add(time.Hour)) })
	add("expired@example.com", func(l *licentia.Licence) { l.Status, l.ExpiresAt = licentia.StatusExpired, ptr(edge.Add(time.Hour)) })
	add("expired-lapsed@example.com", func(l *licentia.Licence) { l.Status, l.ExpiresAt = licentia.StatusExpired, &edge })
	add("expired-open@example.com", func(l *licentia.Licence) { l.Status = licentia.StatusExpired })
	add("expired-trial@example.com", func(l *licentia.Licence) {
		l.Status, l.ExpiresAt, l.TrialEndsAt = licentia.StatusExpired, ptr(edge.Add(time.Hour)), ptr(edge.Add(time.Hour))
	})
	add("revoked@example.com", func(l *licentia.Licence) { l.Status, l.ExpiresAt, l.TrialEndsAt = licentia.StatusRevoked, &edge, &edge })
	add("revoked-open@example.com", func(l *licentia.Licence) { l.Status = licentia.StatusRevoked })
	add("revoked-trial@example.com", func(l *licentia.Licence) { l.Status, l.TrialEndsAt = licentia.StatusRevoked, ptr(edge.Add(time.Hour)) })
	createLicences(t, s, all...)

	seen := map[licentia.State]bool{}
	for _, now := range []time.Time{edge.Add(-time.Hour), edge.Add(-time.Millisecond), edge, edge.Add(time.Millisecond),
		edge.Add(time.Millisecond / 2), edge.Add(time.Hour - time.Millisecond), edge.Add(time.Hour), edge.Add(2 * time.Hour)} {
		for _, st := range []licentia.State{licentia.StateActive, licentia.StateTrial, licentia.StateExpired, licentia.StateRevoked} {
			got, err := s.FindLicences(t.Context(), o.ID, store.LicenceFilter{Q: everyLicence, State: &st, Limit: 100}, now)
			want := matching(all, func(l *licentia.Licence) bool { return l.DerivedState(now) == st })
			if diff := gocmp.Diff(newestFirst(want), licenceIDs(got)); diff != "" || err != nil {
				t.Errorf("FindLicences(state %s, now %s) error = %v, mismatch with DerivedState (-want +got):\n%s",
					st, now.Format(time.RFC3339Nano), err, diff)
			}
			seen[st] = seen[st] || len(want) > 0
		}
	}
	for _, st := range []licentia.State{licentia.StateActive, licentia.StateTrial, licentia.StateExpired, licentia.StateRevoked} {
		if !seen[st] {
			t.Errorf("no licence is derived %s at any instant tried, want every state met", st)
		}
	}
	if got := fmt.Sprintf("%s %s", all[1].DerivedState(edge), all[2].DerivedState(edge.Add(-time.Millisecond))); got != "expired trial" {
		t.Errorf("DerivedState() at the edges = %s, want expired trial", got)
	}
}

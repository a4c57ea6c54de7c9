package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testAuditPage lists an organization's entries newest first, a page at a
// time, never another organization's.
func testAuditPage(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	var mine []*licentia.AuditEntry
	for i := range 5 {
		e := newAuditEntry(o.ID, `{}`)
		// Two entries share each instant: the order written decides.
		e.At = base.Add(time.Duration(i/2) * time.Millisecond)
		mine = append(mine, e)
		appendAudit(t, s, e)
		appendAudit(t, s, newAuditEntry(other.ID, `{}`))
	}
	newest := func(es ...*licentia.AuditEntry) []licentia.AuditEntry {
		var out []licentia.AuditEntry
		for i := len(es) - 1; i >= 0; i-- {
			out = append(out, *es[i])
		}
		return out
	}
	otherEntry := newAuditEntry(other.ID, `{}`)
	appendAudit(t, s, otherEntry)
	for _, tt := range []struct {
		name   string
		before *string
		limit  int
		want   []licentia.AuditEntry
	}{
		{"first page", nil, 2, newest(mine[3], mine[4])},
		{"next page", &mine[3].ID, 2, newest(mine[1], mine[2])},
		{"last page", &mine[1].ID, 2, newest(mine[0])},
		{"after the oldest", &mine[0].ID, 2, nil},
		{"all", nil, 10, newest(mine...)},
		{"another organization's entry", &otherEntry.ID, 10, nil},
		{"unknown entry", ptr(licentia.NewID()), 10, nil},
		{"not an id", ptr("nope"), 10, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachReader(t, s, func(t *testing.T, r store.Reader) {
				got, err := r.AuditPage(t.Context(), o.ID, store.AuditQuery{Before: tt.before}, tt.limit)
				if err != nil {
					t.Errorf("AuditPage() error = %v", err)
					return
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("AuditPage() mismatch (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// testAuditPageFilters keeps the entries of one action, one actor, one
// kind of actor or a span of time, each with paging, never another
// organization's.
func testAuditPageFilters(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	member, key := licentia.NewID(), licentia.NewID()
	entry := func(orgID, action string, actor licentia.Actor, at time.Time) *licentia.AuditEntry {
		e := newAuditEntry(orgID, `{}`)
		e.Action, e.Actor, e.At = action, actor, at
		appendAudit(t, s, e)
		return e
	}
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	issued := entry(o.ID, licentia.AuditLicenceIssued, licentia.MemberActor(member), day.Add(-time.Millisecond))
	revoked := entry(o.ID, licentia.AuditLicenceRevoked, licentia.APIKeyActor(key), day)
	freed := entry(o.ID, licentia.AuditActivationDeactivated, licentia.Actor{Type: licentia.ActorSystem}, day.Add(24*time.Hour-time.Millisecond))
	issuedLater := entry(o.ID, licentia.AuditLicenceIssued, licentia.MemberActor(member), day.Add(24*time.Hour))
	entry(other.ID, licentia.AuditLicenceIssued, licentia.MemberActor(member), day)
	action, memberType, system := licentia.AuditLicenceIssued, licentia.ActorMember, licentia.ActorSystem
	apiKeyType := licentia.ActorAPIKey
	from, to := day, day.Add(24*time.Hour)
	for _, tt := range []struct {
		name  string
		q     store.AuditQuery
		limit int
		want  []*licentia.AuditEntry
	}{
		{"action", store.AuditQuery{Action: &action}, 10, []*licentia.AuditEntry{issuedLater, issued}},
		{"action, next page", store.AuditQuery{Action: &action, Before: &issuedLater.ID}, 10, []*licentia.AuditEntry{issued}},
		{"member", store.AuditQuery{ActorType: &memberType, ActorID: &member}, 1, []*licentia.AuditEntry{issuedLater}},
		{"API key", store.AuditQuery{ActorType: &apiKeyType, ActorID: &key}, 10, []*licentia.AuditEntry{revoked}},
		{"another member", store.AuditQuery{ActorType: &memberType, ActorID: ptr(licentia.NewID())}, 10, nil},
		{"kind of actor", store.AuditQuery{ActorType: &system}, 10, []*licentia.AuditEntry{freed}},
		{"one day", store.AuditQuery{From: &from, To: &to}, 10, []*licentia.AuditEntry{freed, revoked}},
		{"from", store.AuditQuery{From: &to}, 10, []*licentia.AuditEntry{issuedLater}},
		{"to", store.AuditQuery{To: &from}, 10, []*licentia.AuditEntry{issued}},
		{"all together", store.AuditQuery{Action: &action, ActorType: &memberType, ActorID: &member, From: &from}, 10, []*licentia.AuditEntry{issuedLater}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want []licentia.AuditEntry
			for _, e := range tt.want {
				want = append(want, *e)
			}
			eachReader(t, s, func(t *testing.T, r store.Reader) {
				got, err := r.AuditPage(t.Context(), o.ID, tt.q, tt.limit)
				if err != nil {
					t.Errorf("AuditPage() error = %v", err)
					return
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("AuditPage() mismatch (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// testAuditByDay counts entries of the chosen actions per UTC day from
// since, never another organization's or older ones.
func testAuditByDay(t *testing.T, s store.Store) {
	o := createOrganization(t, s, "acme")
	other := createOrganization(t, s, "other")
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	since := day.Add(-2*24*time.Hour + 6*time.Hour) // 27 February, 06:00
	entry := func(orgID, action string, at time.Time) *licentia.AuditEntry {
		e := newAuditEntry(orgID, `{}`)
		e.Action, e.At = action, at
		return e
	}
	appendAudit(t, s,
		entry(o.ID, licentia.AuditLicenceIssued, since.Add(-time.Millisecond)), // before since
		entry(o.ID, licentia.AuditLicenceIssued, since),
		entry(o.ID, licentia.AuditLicenceIssued, day.Add(-time.Millisecond)), // 28 February, last instant
		entry(o.ID, licentia.AuditLicenceRevoked, day.Add(-time.Hour)),
		entry(o.ID, licentia.AuditLicenceIssued, day),
		entry(o.ID, licentia.AuditLicenceIssued, day.Add(23*time.Hour)),
		entry(o.ID, licentia.AuditActivationCreated, day.Add(time.Hour)),
		entry(o.ID, licentia.AuditAPIKeyCreated, day.Add(time.Hour)), // not counted
		entry(other.ID, licentia.AuditLicenceIssued, day),
	)
	actions := []string{licentia.AuditLicenceIssued, licentia.AuditLicenceRevoked, licentia.AuditActivationCreated}
	want := []store.AuditDay{
		{Day: day.Add(-48 * time.Hour), Action: licentia.AuditLicenceIssued, N: 1},
		{Day: day.Add(-24 * time.Hour), Action: licentia.AuditLicenceIssued, N: 1},
		{Day: day.Add(-24 * time.Hour), Action: licentia.AuditLicenceRevoked, N: 1},
		{Day: day, Action: licentia.AuditActivationCreated, N: 1},
		{Day: day, Action: licentia.AuditLicenceIssued, N: 2},
	}
	eachReader(t, s, func(t *testing.T, r store.Reader) {
		got, err := r.AuditByDay(t.Context(), o.ID, actions, since)
		if err != nil {
			t.Errorf("AuditByDay() error = %v", err)
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("AuditByDay() mismatch (-want +got):\n%s", diff)
		}
		if got, err := r.AuditByDay(t.Context(), o.ID, actions, day.Add(24*time.Hour)); err != nil || len(got) != 0 {
			t.Errorf("AuditByDay() from the next day = %v, %v; want none", got, err)
		}
		if got, err := r.AuditByDay(t.Context(), licentia.NewID(), actions, since); err != nil || len(got) != 0 {
			t.Errorf("AuditByDay() of an unknown organization = %v, %v; want none", got, err)
		}
	})
}

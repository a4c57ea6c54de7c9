package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// ids lists the ids of licences, in order.
func ids(ls []licenceView) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, l.ID)
	}
	return out
}

// edited returns key with one character of its signature changed.
func edited(key string) string {
	i := len(key) - 10
	c := byte('A')
	if key[i] == 'A' {
		c = 'B'
	}
	return key[:i] + string(c) + key[i+1:]
}

// TestFindLicences: every parameter alone and combined, newest first;
// answers never carry keys.
func TestFindLicences(t *testing.T) {
	e := newLicenceEnv(t)
	e.createProduct(t, e.allKey, productBody("desk-two", "DESKB", nil))
	issue := func(product, email string, edits map[string]any) issuedView {
		e.clock.Advance(time.Minute)
		edits["product_id"], edits["email"] = product, email
		return e.issue(t, e.allKey, issueBody(edits))
	}
	a := issue("desk-app", "ada@example.com", map[string]any{"external_ref": "order-1"})
	b := issue("desk-two", "ADA@example.com", map[string]any{"external_ref": "order-1", "expires_at": "2026-06-01T00:00:00Z"})
	c := issue("desk-app", "adam@example.com", map[string]any{"trial": true, "expires_at": "2026-03-20T00:00:00Z"})
	d := issue("desk-app", "bob@example.org", map[string]any{"external_ref": "Order-1 "})
	lapsing := issue("desk-app", "ada@example.com", map[string]any{"expires_at": "2026-03-02T10:00:00Z"})
	e.change(t, d.Licence.ID, "revoke", "refund")
	e.clock.Set(time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC))
	l := lapsing.Licence.ID
	all := []string{l, c.Licence.ID, b.Licence.ID, a.Licence.ID}

	for _, tt := range []struct {
		query string
		want  []string
	}{
		{q("email", "ada@example.com"), []string{l, b.Licence.ID, a.Licence.ID}},
		{q("email", "ADA@EXAMPLE.COM"), []string{l, b.Licence.ID, a.Licence.ID}},
		{q("email", "ada@example"), nil},
		{q("email", "da@example.com"), nil},
		{q("email", strings.Repeat("é", 314)+"@x.io"), nil},
		{q("q", "ada"), all},
		{q("q", "ADAM"), []string{c.Licence.ID}},
		{q("q", "ada@example.com"), []string{l, b.Licence.ID, a.Licence.ID}},
		{q("q", "example"), nil},
		{q("q", d.Licence.ID), []string{d.Licence.ID}},
		{q("q", d.Licence.ID[:8]), nil},
		{q("q", "order-1"), []string{b.Licence.ID, a.Licence.ID}},
		{q("q", "Order-1 "), []string{d.Licence.ID}},
		{q("q", "Order-1"), nil},
		{q("q", "order"), nil},
		{q("q", a.LicenceKey), []string{a.Licence.ID}},
		{q("q", strings.ToLower(a.LicenceKey)), []string{a.Licence.ID}},
		{q("q", strings.ReplaceAll(a.LicenceKey, "-", "")), []string{a.Licence.ID}},
		{q("q", " \t"+a.LicenceKey+"\n "), []string{a.Licence.ID}},
		{q("q", edited(a.LicenceKey)), nil},
		{q("q", b.LicenceKey), []string{b.Licence.ID}},
		{q("q", a.LicenceKey, "product_id", "desk-two"), nil},
		{q("external_ref", "order-1", "product_id", "desk-app"), []string{a.Licence.ID}},
		{q("external_ref", "order-1", "product_id", "desk-two"), []string{b.Licence.ID}},
		{q("external_ref", "ORDER-1", "product_id", "desk-app"), nil},
		{q("external_ref", "Order-1 ", "product_id", "desk-app"), []string{d.Licence.ID}},
		{q("email", "ada@example.com", "product_id", "desk-app"), []string{l, a.Licence.ID}},
		{q("q", "ada", "state", "active"), []string{b.Licence.ID, a.Licence.ID}},
		{q("q", "ada", "state", "trial"), []string{c.Licence.ID}},
		{q("q", "ada", "state", "expired"), []string{l}},
		{q("q", "bob", "state", "revoked"), []string{d.Licence.ID}},
		{q("q", "ada", "state", "revoked"), nil},
		{q("q", "ada", "status", "active"), all},
		{q("q", "ada", "status", "expired"), nil},
		{q("q", "bob", "status", "revoked"), []string{d.Licence.ID}},
		{q("q", "ada", "term", "perpetual"), []string{a.Licence.ID}},
		{q("q", "ada", "term", "term"), []string{l, c.Licence.ID, b.Licence.ID}},
		{q("q", "ada", "term", "subscription"), nil},
		{q("q", "ada", "source", "admin"), all},
		{q("q", "ada", "source", "provider"), nil},
		{q("q", "ada", "product_id", "desk-app", "state", "active", "status", "active", "term", "perpetual", "source", "admin"), []string{a.Licence.ID}},
		{q("email", "ada@example.com", "q", "order-1"), []string{b.Licence.ID, a.Licence.ID}},
		{q("email", "ada@example.com", "q", "order-1", "external_ref", "order-1", "product_id", "desk-two"), []string{b.Licence.ID}},
	} {
		t.Run(tt.query, func(t *testing.T) {
			r := e.run(t, scenario{
				call:       call{method: "GET", path: "/v1/admin/licences?" + tt.query, key: e.allKey},
				wantStatus: http.StatusOK, notWant: []string{a.LicenceKey[5:], b.LicenceKey[5:], c.LicenceKey[5:], "licence_key"},
			})
			got := decodeStrict[struct {
				Licences []licenceView `json:"licences"`
			}](t, r.body).Licences
			if diff := cmp.Diff(append([]string{}, tt.want...), ids(got)); diff != "" {
				t.Errorf("found ids mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("licence objects as read", func(t *testing.T) {
		for _, got := range e.find(t, e.allKey, q("q", "ada")) {
			if diff := cmp.Diff(e.read(t, got.ID).Licence, got); diff != "" {
				t.Errorf("found licence differs from its read (-read +found):\n%s", diff)
			}
		}
	})
	t.Run("keys after a rotation", func(t *testing.T) {
		e.rotate(t, e.allKey, "desk-app", nil)
		newKey := *e.read(t, a.Licence.ID).LicenceKey
		if newKey == a.LicenceKey {
			t.Fatalf("licence key unchanged by a rotation")
		}
		for _, key := range []string{a.LicenceKey, newKey} {
			if got := ids(e.find(t, e.allKey, q("q", key))); !cmp.Equal(got, []string{a.Licence.ID}) {
				t.Errorf("find by key %s = %v, want %s", key, got, a.Licence.ID)
			}
		}
		e.rotate(t, e.allKey, "desk-app", map[string]any{"keep_previous": false})
		if got := ids(e.find(t, e.allKey, q("q", newKey))); len(got) != 0 {
			t.Errorf("find by a key of a retired signing key = %v, want none", got)
		}
	})
}

// TestFindLicencesLimit: at most 100, the newest.
func TestFindLicencesLimit(t *testing.T) {
	e := newLicenceEnv(t)
	var want []string
	for range 101 {
		e.clock.Advance(time.Second)
		want = append([]string{e.seed(t, admin.NewLicence{}).ID}, want...)
	}
	if diff := cmp.Diff(want[:100], ids(e.find(t, e.allKey, q("email", "ada@example.com")))); diff != "" {
		t.Errorf("found ids mismatch (-want +got):\n%s", diff)
	}
	// Licences issued in the same millisecond come by id, descending.
	same := []string{e.seed(t, admin.NewLicence{ID: ptr("00000000-0000-4000-8000-000000000001"), Email: ptr("same@example.com")}).ID,
		e.seed(t, admin.NewLicence{ID: ptr("ffffffff-0000-4000-8000-000000000001"), Email: ptr("same@example.com")}).ID}
	if diff := cmp.Diff([]string{same[1], same[0]}, ids(e.find(t, e.allKey, q("email", "same@example.com")))); diff != "" {
		t.Errorf("ties mismatch (-want +got):\n%s", diff)
	}
}

// TestFindLicencesRefused: at least one of email, q and external_ref;
// external_ref needs product_id; every value checked; unknown and
// repeated parameters refused; every problem reported at once.
func TestFindLicencesRefused(t *testing.T) {
	e := newLicenceEnv(t)
	const needOne = "give at least one of email, q, external_ref"
	for _, tt := range []struct {
		name, query string
		issues      []string
		// documentAllows marks a refusal the document cannot express.
		documentAllows bool
	}{
		{"nothing", "", []string{"query", needOne}, true},
		{"product_id alone", q("product_id", "desk-app"), []string{"query", needOne}, true},
		{"state alone", q("state", "active"), []string{"query", needOne}, true},
		{"status alone", q("status", "active"), []string{"query", needOne}, true},
		{"term alone", q("term", "term"), []string{"query", needOne}, true},
		{"source alone", q("source", "admin"), []string{"query", needOne}, true},
		{"external_ref without product_id", q("external_ref", "order-1"), []string{"query.product_id", "is required with external_ref"}, true},
		{"empty email", q("email", ""), []string{"query.email", "must be 1 to 320 characters"}, false},
		{"email of 321 characters", q("email", strings.Repeat("é", 321)), []string{"query.email", "must be 1 to 320 characters"}, false},
		{"empty q", q("q", ""), []string{"query.q", "must be 1 to 2048 characters"}, false},
		{"q of 2049 characters", q("q", strings.Repeat("q", 2049)), []string{"query.q", "must be 1 to 2048 characters"}, false},
		{"product_id not an id", q("q", "ada", "product_id", "Desk"), []string{"query.product_id", "must be 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen"}, false},
		{"external_ref of 201 characters", q("external_ref", strings.Repeat("r", 201), "product_id", "desk-app"), []string{"query.external_ref", "must be 1 to 200 characters"}, false},
		{"external_ref not ASCII", q("external_ref", "commande-é", "product_id", "desk-app"), []string{"query.external_ref", "must be 1 to 200 printable ASCII characters"}, false},
		{"unknown state", q("q", "ada", "state", "Active"), []string{"query.state", "must be one of [active trial expired revoked]"}, false},
		{"unknown status", q("q", "ada", "status", "lapsed"), []string{"query.status", "must be one of [active revoked expired]"}, false},
		{"unknown term", q("q", "ada", "term", "forever"), []string{"query.term", "must be one of [perpetual term subscription]"}, false},
		{"unknown source", q("q", "ada", "source", "stripe"), []string{"query.source", "must be one of [admin provider]"}, false},
		{"unknown parameter", q("q", "ada", "limit", "10"), []string{"query.limit", "unknown parameter"}, true},
		{"parameter in another case", q("Email", "ada@example.com"), []string{"query.Email", "unknown parameter", "query", needOne}, true},
		{"parameter given twice", "email=ada%40example.com&email=bob%40example.com", []string{"query.email", "must be given once", "query", needOne}, true},
		{
			"every problem at once",
			q("state", "x", "status", "y", "term", "z", "source", "w", "product_id", "-x", "external_ref", "r", "page", "2"),
			[]string{
				"query.page", "unknown parameter", "query.state", "must be one of [active trial expired revoked]",
				"query.status", "must be one of [active revoked expired]", "query.term", "must be one of [perpetual term subscription]",
				"query.source", "must be one of [admin provider]",
				"query.product_id", "must be 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen",
			},
			false,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The document lists the parameters but cannot refuse unknown
			// or repeated ones, or say which must come together.
			c := call{method: "GET", path: "/v1/admin/licences?" + tt.query, key: e.allKey, invalid: true}
			e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(tt.issues...)})
			if !tt.documentAllows {
				e.documentRefuses(t, c)
			}
		})
	}
}

// countsView is the answer to a count.
type countsView struct {
	Since  string `json:"since"`
	Counts struct {
		All          int64 `json:"all"`
		Active       int64 `json:"active"`
		Trial        int64 `json:"trial"`
		Expired      int64 `json:"expired"`
		Revoked      int64 `json:"revoked"`
		Perpetual    int64 `json:"perpetual"`
		Term         int64 `json:"term"`
		Subscription int64 `json:"subscription"`
		BySource     struct {
			Admin    int64 `json:"admin"`
			Provider int64 `json:"provider"`
		} `json:"by_source"`
		LiveMachines int64 `json:"live_machines"`
		IssuedSince  int64 `json:"issued_since"`
		RevokedSince int64 `json:"revoked_since"`
	} `json:"counts"`
}

// counts reads the counts with query.
func (e *licenceEnv) counts(t *testing.T, query string) countsView {
	t.Helper()
	r := e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/licences/counts?" + query, key: e.allKey}, wantStatus: http.StatusOK})
	return decodeStrict[countsView](t, r.body)
}

// countsOf is a countsView from its numbers, in the order of the contract.
func countsOf(since string, n ...int64) countsView {
	var c countsView
	c.Since = since
	k := &c.Counts
	for i, p := range []*int64{&k.All, &k.Active, &k.Trial, &k.Expired, &k.Revoked, &k.Perpetual, &k.Term, &k.Subscription,
		&k.BySource.Admin, &k.BySource.Provider, &k.LiveMachines, &k.IssuedSince, &k.RevokedSince} {
		*p = n[i]
	}
	return c
}

// TestCountLicences: every number of the counts with a known mix of
// states, terms and machines, for the organization and for one product;
// since bounds issued_since and revoked_since inclusively.
func TestCountLicences(t *testing.T) {
	e := newLicenceEnv(t)
	e.createProduct(t, e.allKey, productBody("desk-two", "DESKB", nil))
	org := e.org.ID
	seed := func(product string, in admin.NewLicence) string { return e.seedIn(t, org, product, in).ID }
	in := func(d time.Duration) *time.Time { return ptr(e.clock.Now().Add(d)) }

	// Day 0: a (perpetual, 2 live machines and 2 freed), b (term, 1), c
	// (trial, 1), d (perpetual, 1; revoked on day 1).
	a := seed("desk-app", admin.NewLicence{})
	b := seed("desk-app", admin.NewLicence{ExpiresAt: in(90 * 24 * time.Hour)})
	c := seed("desk-app", admin.NewLicence{ExpiresAt: in(14 * 24 * time.Hour), Trial: ptr(true)})
	d := seed("desk-app", admin.NewLicence{})
	for _, m := range []struct{ licence, machine string }{{a, "a1"}, {a, "a2"}, {b, "b1"}, {c, "c1"}, {d, "d1"}} {
		e.activate(t, org, m.licence, m.machine)
	}
	freed := e.activate(t, org, a, "a4")
	e.run(t, scenario{call: call{method: "POST", path: "/v1/admin/activations/" + freed.ID + "/deactivate", key: e.allKey}, wantStatus: http.StatusOK})
	if _, err := e.admin.DeactivateActivation(t.Context(), e.actor, org, e.activate(t, org, a, "a5").ID); err != nil {
		t.Fatal(err)
	}
	// Day 1: l (term, lapses in an hour, 1 machine), f (desk-two, expired on
	// purpose), g (desk-two, anonymised with a machine).
	day1 := start.Add(24 * time.Hour)
	e.clock.Set(day1)
	l := seed("desk-app", admin.NewLicence{ExpiresAt: in(time.Hour)})
	e.activate(t, org, l, "l1")
	f := seed("desk-two", admin.NewLicence{})
	g := seed("desk-two", admin.NewLicence{})
	e.activate(t, org, g, "g1")
	e.clock.Advance(time.Minute)
	e.change(t, d, "revoke", "refund")
	e.change(t, f, "expire", "ended")
	e.clock.Advance(time.Minute)
	e.run(t, scenario{call: call{method: "POST", path: licencePath(g, "anonymise"), key: e.allKey, body: map[string]any{"confirm": true}}, wantStatus: http.StatusOK})
	e.clock.Set(day1.Add(2 * time.Hour))
	now := e.clock.Now()
	week := licentia.FormatTime(now.Add(-7 * 24 * time.Hour))

	//                       all act tri exp rev per trm sub adm prv live iss rev
	want := countsOf(week, 7, 2, 1, 2, 2, 4, 3, 0, 7, 0, 4, 7, 2)
	for _, tt := range []struct {
		name, query string
		want        countsView
	}{
		{"default since", "", want},
		{"since at the day-1 issues", q("since", "2026-03-03T09:00:00Z"), countsOf("2026-03-03T09:00:00.000Z", 7, 2, 1, 2, 2, 4, 3, 0, 7, 0, 4, 3, 2)},
		{"since 1 ms after them", q("since", "2026-03-03T09:00:00.001Z"), countsOf("2026-03-03T09:00:00.001Z", 7, 2, 1, 2, 2, 4, 3, 0, 7, 0, 4, 0, 2)},
		{"since at the revocation, with an offset", q("since", "2026-03-03T10:01:00+01:00"), countsOf("2026-03-03T09:01:00.000Z", 7, 2, 1, 2, 2, 4, 3, 0, 7, 0, 4, 0, 2)},
		{"since after the revocation", q("since", "2026-03-03T09:01:00.001Z"), countsOf("2026-03-03T09:01:00.001Z", 7, 2, 1, 2, 2, 4, 3, 0, 7, 0, 4, 0, 1)},
		{"since in the future", q("since", "2027-01-01T00:00:00Z"), countsOf("2027-01-01T00:00:00.000Z", 7, 2, 1, 2, 2, 4, 3, 0, 7, 0, 4, 0, 0)},
		{"desk-app", q("product_id", "desk-app"), countsOf(week, 5, 2, 1, 1, 1, 2, 3, 0, 5, 0, 4, 5, 1)},
		{"desk-two", q("product_id", "desk-two"), countsOf(week, 2, 0, 0, 1, 1, 2, 0, 0, 2, 0, 0, 2, 1)},
		{"desk-two since", q("product_id", "desk-two", "since", "2026-03-03T09:02:00Z"), countsOf("2026-03-03T09:02:00.000Z", 2, 0, 0, 1, 1, 2, 0, 0, 2, 0, 0, 0, 1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, e.counts(t, tt.query)); diff != "" {
				t.Errorf("counts mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("after a sweep", func(t *testing.T) {
		if _, err := e.admin.SweepLicences(t.Context()); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, e.counts(t, "")); diff != "" {
			t.Errorf("counts after a sweep mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("reinstated machines count again", func(t *testing.T) {
		e.change(t, d, "reinstate", "paid")
		got := e.counts(t, "")
		if got.Counts.LiveMachines != 5 || got.Counts.Active != 3 || got.Counts.Revoked != 1 {
			t.Errorf("after reinstating d: live_machines %d, active %d, revoked %d; want 5, 3, 1", got.Counts.LiveMachines, got.Counts.Active, got.Counts.Revoked)
		}
	})
}

// TestCountLicencesRefused: since is an RFC 3339 time with an offset;
// product_id a product id of the caller's (another organization's answers
// like a missing one).
func TestCountLicencesRefused(t *testing.T) {
	e := newLicenceEnv(t)
	e.otherOrg(t, "beta", "beta-app", "BETA")
	const timeRule = "must be an RFC 3339 time with an offset"
	for _, tt := range []scenario{
		{name: "since without an offset", call: call{method: "GET", path: "/v1/admin/licences/counts?" + q("since", "2026-03-01T00:00:00"), key: e.allKey, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.since", timeRule)},
		{name: "since a date", call: call{method: "GET", path: "/v1/admin/licences/counts?" + q("since", "2026-03-01"), key: e.allKey, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.since", timeRule)},
		{name: "product_id not an id", call: call{method: "GET", path: "/v1/admin/licences/counts?" + q("product_id", "Desk"), key: e.allKey, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: issues("query.product_id", "must be 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen")},
		{name: "unknown parameter", call: call{method: "GET", path: "/v1/admin/licences/counts?" + q("state", "active"), key: e.allKey, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.state", "unknown parameter")},
		{name: "unknown product", call: call{method: "GET", path: "/v1/admin/licences/counts?" + q("product_id", "nope-app"), key: e.allKey},
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound},
		{name: "another organization's product", call: call{method: "GET", path: "/v1/admin/licences/counts?" + q("product_id", "beta-app"), key: e.allKey},
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound},
		{name: "400 before 404", call: call{method: "GET", path: "/v1/admin/licences/counts?" + q("product_id", "nope-app", "since", "x"), key: e.allKey, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.since", timeRule)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.run(t, tt)
			if tt.call.invalid && tt.name != "unknown parameter" {
				e.documentRefuses(t, tt.call)
			}
		})
	}
	t.Run("an empty organization", func(t *testing.T) {
		if diff := cmp.Diff(countsOf(at(-7*24*time.Hour), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), e.counts(t, "")); diff != "" {
			t.Errorf("counts mismatch (-want +got):\n%s", diff)
		}
	})
}

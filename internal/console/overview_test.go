package console_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// The overview shows the plan's usage, the licence counts and a chart of
// licences issued and revoked and machines activated on each of the last
// 30 days, from the audit log.
func TestOverview(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		c := e.as(t, licentia.RoleViewer)
		e.product(t, e.org.ID, "desk-app", "DESK")
		// 40 days ago: outside the chart.
		e.clock.Set(start.AddDate(0, 0, -40))
		e.issue(t, e.org.ID, "desk-app", "old@example.com")
		e.clock.Set(start.AddDate(0, 0, -1))
		e.issue(t, e.org.ID, "desk-app", "a@example.com")
		e.clock.Set(start)
		b := e.issue(t, e.org.ID, "desk-app", "b@example.com")
		e.issue(t, e.org.ID, "desk-app", "c@example.com")
		e.activate(t, *b.Key, "m-1")
		if _, err := e.admin.RevokeLicence(t.Context(), licentia.OperatorActor, e.org.ID, b.Licence.ID, admin.Reason("refund")); err != nil {
			t.Fatal(err)
		}

		a := c.get(t, "/console/")
		wantStatus(t, "overview", a, http.StatusOK)
		for _, want := range []string{
			"Plan: <strong>business</strong>",
			`<td>Products</td><td class="num" data-label="Used">1</td><td class="num" data-label="Allowed">100</td>`,
			`<td>Team places</td><td class="num" data-label="Used">2</td><td class="num" data-label="Allowed">50</td>`,
			`<span class="big">4</span> in all`,
			`<span class="big">1</span> revoked`,
			"<title>1 Mar: 1 licences issued</title>",
			"<title>2 Mar: 2 licences issued</title>",
			"<title>2 Mar: 1 licences revoked</title>",
			"<title>2 Mar: 1 machines activated</title>",
			"<title>1 Mar: 0 licences revoked</title>",
			"<td>2026-02-01</td>",
		} {
			if !strings.Contains(a.body, want) {
				t.Errorf("overview lacks %q", want)
			}
		}
		if strings.Contains(a.body, "<td>2026-01-31</td>") || strings.Contains(a.body, "21 Jan") {
			t.Error("the chart reaches back more than 30 days")
		}
		if strings.Count(a.body, `<rect class="series`) != 90 {
			t.Errorf("chart has %d bars, want 3 for each of 30 days", strings.Count(a.body, `<rect class="series`))
		}
	})
}

var olderAudit = regexp.MustCompile(`<a href="(/console/audit\?before=[0-9a-f-]{36})">`)

// The audit log lists the organization's entries newest first, a hundred
// a page.
func TestAuditLogPages(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.owner(t)
	e.product(t, e.org.ID, "desk-app", "DESK")
	for range admin.MaxAuditPage + 5 {
		e.issue(t, e.org.ID, "desk-app", "x@example.com")
		e.clock.Advance(time.Second)
	}
	a := c.get(t, "/console/audit")
	wantStatus(t, "audit log", a, http.StatusOK)
	if n := strings.Count(a.body, `<td data-label="What">Licence issued<br>`); n != admin.MaxAuditPage {
		t.Fatalf("first page lists %d licence.issued entries, want %d", n, admin.MaxAuditPage)
	}
	m := olderAudit.FindStringSubmatch(a.body)
	if m == nil {
		t.Fatalf("first page has no link to older entries:\n%s", a.body)
	}
	older := c.get(t, m[1])
	wantStatus(t, "older entries", older, http.StatusOK)
	if n := strings.Count(older.body, `<td data-label="What">Licence issued<br>`); n != 5 {
		t.Errorf("second page lists %d licence.issued entries, want 5", n)
	}
	for _, want := range []string{">Product created<", ">Member password set<", ">Organization created<"} {
		if !strings.Contains(older.body, want) {
			t.Errorf("second page lacks %s", want)
		}
	}
	if olderAudit.MatchString(older.body) {
		t.Error("the last page links to older entries")
	}
}

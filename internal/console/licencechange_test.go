package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// The licence page changes a licence's limit and expiry: empty fields
// stay, the perpetual box removes the expiry, a refusal shows the form
// again with each field's problem, and each change is licence.updated by
// the member.
func TestChangeLicence(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		member := e.member(t, e.org.ID, "support@acme.example", licentia.RoleSupport)
		c := e.signUp(t, e.org.ID, "support@acme.example")
		a := c.post(t, "/console/licences", url.Values{"product_id": {"desk-app"}, "email": {"ada@example.com"},
			"limit_count": {"3"}, "expires_at": {"2027-01-31"}})
		m := licencePath.FindStringSubmatch(a.location())
		if m == nil {
			t.Fatalf("issue = %d to %q:\n%s", a.status, a.location(), a.body)
		}
		id := m[1]
		page := c.get(t, "/console/licences/"+id)
		if !strings.Contains(page.body, `action="/console/licences/`+id+`/change"`) || !strings.Contains(page.body, "Change licence") {
			t.Fatalf("licence page offers no change form:\n%s", page.body)
		}

		a = c.post(t, "/console/licences/"+id+"/change", url.Values{"limit_count": {"0"}, "expires_at": {"soon"}})
		wantStatus(t, "change with bad fields", a, http.StatusBadRequest)
		for _, want := range []string{"Check the fields marked below.", "must be an integer from 1 to 4294967295", "must be a date", `value="soon"`} {
			if !strings.Contains(a.body, want) {
				t.Errorf("refused change lacks %q:\n%s", want, a.body)
			}
		}
		a = c.post(t, "/console/licences/"+id+"/change", url.Values{"limit_count": {""}})
		wantStatus(t, "empty change", a, http.StatusBadRequest)
		a = c.post(t, "/console/licences/"+id+"/change", url.Values{"expires_at": {"2028-01-01"}, "perpetual": {"yes"}})
		wantStatus(t, "expiry and perpetual", a, http.StatusBadRequest)
		if !strings.Contains(a.body, "leave it empty to make the licence perpetual") {
			t.Errorf("refused change does not explain the perpetual box:\n%s", a.body)
		}

		wantSeeOther(t, "change", c.post(t, "/console/licences/"+id+"/change", url.Values{"limit_count": {"1"}, "limit_kind": {"machines"},
			"expires_at": {"2027-06-30T12:00"}}), "/console/licences/"+id+"?done=licence-changed")
		wantMemberActor(t, e, licentia.AuditLicenceUpdated, member.ID)
		l, err := e.store.Licence(t.Context(), e.org.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if l.LimitCount != 1 || l.LimitKind != licentia.LimitMachines || l.ExpiresAt == nil ||
			!l.ExpiresAt.Equal(time.Date(2027, 6, 30, 12, 0, 0, 0, time.UTC)) || l.Major != 1 {
			t.Errorf("changed licence = %+v", l)
		}
		wantSeeOther(t, "perpetual", c.post(t, "/console/licences/"+id+"/change", url.Values{"perpetual": {"yes"}}),
			"/console/licences/"+id+"?done=licence-changed")
		if l, err := e.store.Licence(t.Context(), e.org.ID, id); err != nil || l.ExpiresAt != nil || l.LimitCount != 1 {
			t.Errorf("licence made perpetual = %+v, %v", l, err)
		}
		wantSeeOther(t, "same again", c.post(t, "/console/licences/"+id+"/change", url.Values{"perpetual": {"yes"}}),
			"/console/licences/"+id+"?done=unchanged")
		if got := c.get(t, "/console/licences/"+id+"?done=licence-changed"); !strings.Contains(got.body, "The licence was changed.") {
			t.Errorf("licence page lacks the notice")
		}
		n := 0
		for _, ev := range e.events(t) {
			if ev == licentia.EventLicenceUpdated {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%d licence.updated events, want 2", n)
		}
	})
}

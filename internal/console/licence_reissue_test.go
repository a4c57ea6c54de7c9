package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

var reissuedPath = regexp.MustCompile(`^/console/licences/([0-9a-f-]{36})\?done=reissued$`)

// The licence page reissues a leaked key for a member with licences:write:
// a reason is required, the member lands on the new licence's page with
// its new key and the moved machine, the old page says it was replaced and
// offers no reissue again; a viewer sees no reissue form and is refused.
func TestReissueInConsole(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		member := e.member(t, e.org.ID, "support@acme.example", licentia.RoleSupport)
		e.member(t, e.org.ID, "viewer@acme.example", licentia.RoleViewer)
		c := e.signUp(t, e.org.ID, "support@acme.example")
		v := e.issue(t, e.org.ID, "desk-app", "ada@example.com")
		id := v.Licence.ID
		e.activate(t, *v.Key, "machine-a")

		page := c.get(t, "/console/licences/"+id)
		if !strings.Contains(page.body, `action="/console/licences/`+id+`/reissue"`) || !strings.Contains(page.body, "Reissue key") {
			t.Fatalf("licence page offers no reissue:\n%s", page.body)
		}
		a := c.post(t, "/console/licences/"+id+"/reissue", url.Values{"reason": {""}})
		wantStatus(t, "reissue without a reason", a, http.StatusBadRequest)
		if !strings.Contains(a.body, `<span class="field-error">Reason: is required</span>`) {
			t.Errorf("refused reissue lacks the reason's problem:\n%s", a.body)
		}

		a = c.post(t, "/console/licences/"+id+"/reissue", url.Values{"reason": {"shared on a forum"}})
		m := reissuedPath.FindStringSubmatch(a.location())
		if a.status != http.StatusSeeOther || m == nil || m[1] == id {
			t.Fatalf("reissue = %d to %q, want 303 to the new licence:\n%s", a.status, a.location(), a.body)
		}
		wantMemberActor(t, e, licentia.AuditLicenceRevoked, member.ID)
		fresh := c.get(t, a.location())
		newKey := keyOf(t, fresh.body)
		for _, want := range []string{"The key was reissued", "machine-a", `href="/console/licences/` + id + `"`} {
			if !strings.Contains(fresh.body, want) {
				t.Errorf("new licence page lacks %q:\n%s", want, fresh.body)
			}
		}
		if newKey == *v.Key {
			t.Error("the new licence shows the old key")
		}
		old := c.get(t, "/console/licences/"+id)
		if !strings.Contains(old.body, "reissued: shared on a forum") || !strings.Contains(old.body, `href="/console/licences/`+m[1]+`"`) ||
			strings.Contains(old.body, `/reissue"`) {
			t.Errorf("old licence page does not show it replaced, or offers a reissue again:\n%s", old.body)
		}

		viewer := e.signUp(t, e.org.ID, "viewer@acme.example")
		if strings.Contains(viewer.get(t, "/console/licences/"+m[1]).body, `/reissue"`) {
			t.Error("a viewer is offered the reissue form")
		}
		wantStatus(t, "viewer reissues", viewer.post(t, "/console/licences/"+m[1]+"/reissue", url.Values{"reason": {"x"}}), http.StatusForbidden)
	})
}

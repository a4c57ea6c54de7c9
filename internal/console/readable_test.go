package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// statusForms finds the status change forms a licence page offers.
var statusForms = regexp.MustCompile(`action="/console/licences/[0-9a-f-]{36}/(revoke|expire|reinstate)"`)

func offered(body string) []string {
	var out []string
	for _, m := range statusForms.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// A licence page offers only the status changes its state allows, the
// key forms only while it is in force, reads its limit and machines in
// plain words, and shows a machine by its label with its id shortened.
func TestLicencePageReadsPlainly(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		c := e.owner(t)
		e.product(t, e.org.ID, "desk-app", "DESK")
		one, email, product := int64(1), "ada@example.com", "desk-app"
		lv, err := e.admin.IssueLicence(t.Context(), licentia.OperatorActor, e.org.ID, admin.NewLicence{
			ProductID: &product, Email: &email, LimitCount: &one})
		if err != nil {
			t.Fatal(err)
		}
		machine := "machine-0123456789abcdef0123456789"
		e.activate(t, *lv.Key, machine)
		path := "/console/licences/" + lv.Licence.ID

		page := c.get(t, path)
		wantStatus(t, "active licence", page, http.StatusOK)
		if got := offered(page.body); strings.Join(got, ",") != "revoke,expire" {
			t.Errorf("active licence offers %v, want revoke and expire", got)
		}
		for _, want := range []string{"1 seat (up to 3 machines)", "1 of 3 in use", "<strong>Laptop " + machine + "</strong>",
			`title="` + machine + `">machine-0123…</code>`, "/send-key", "/reissue"} {
			if !strings.Contains(page.body, want) {
				t.Errorf("active licence page lacks %q", want)
			}
		}
		for _, bad := range []string{"1 seats", "1 machines", "stored status", "machines now"} {
			if strings.Contains(page.body, bad) {
				t.Errorf("active licence page reads %q", bad)
			}
		}

		wantSeeOther(t, "revoke", c.post(t, path+"/revoke", url.Values{"reason": {"chargeback"}}), path+"?done=revoked")
		page = c.get(t, path)
		if got := offered(page.body); strings.Join(got, ",") != "reinstate" {
			t.Errorf("revoked licence offers %v, want only reinstate", got)
		}
		if !strings.Contains(page.body, "reason: chargeback") || strings.Contains(page.body, "/send-key") || strings.Contains(page.body, "/reissue\"") {
			t.Errorf("revoked licence page lacks its reason, or offers to mail or reissue its key")
		}
		if !strings.Contains(page.body, "0 of 3 in use; 1 machine keeps its seat while the licence is revoked") {
			t.Errorf("revoked licence page does not say its machine keeps its seat, unused")
		}

		wantSeeOther(t, "reinstate", c.post(t, path+"/reinstate", url.Values{"reason": {"settled"}}), path+"?done=reinstated")
		two := int64(2)
		if _, err := e.admin.UpdateLicence(t.Context(), licentia.OperatorActor, e.org.ID, lv.Licence.ID,
			admin.LicenceChange{LimitCount: &two, ExpiresAt: ptr(start.Add(time.Hour))}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(2 * time.Hour)
		page = c.get(t, path)
		if got := offered(page.body); strings.Join(got, ",") != "revoke" {
			t.Errorf("licence past its expiry offers %v, want only revoke", got)
		}
		if !strings.Contains(page.body, "0 of 6 in use; 1 machine keeps its seat while the licence is expired") {
			t.Errorf("lapsed licence page does not say its machine keeps its seat, unused")
		}
		if !strings.Contains(page.body, "2 seats") || !strings.Contains(page.body, "its expiry has passed") {
			t.Errorf("lapsed licence page lacks 2 seats or why it is expired")
		}
	})
}

// uuidText finds a UUID shown as text rather than inside an attribute or
// a link.
var uuidText = regexp.MustCompile(`>[^<]*[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}[^<]*<`)

// The audit log and a licence's history name members by email and API
// keys by name, say details in words and key/value lines, never JSON, and
// the log filters by action, actor and date, page by page.
func TestAuditLogReadable(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.owner(t)
		e.product(t, e.org.ID, "desk-app", "DESK")
		ms, err := e.store.Members(t.Context(), e.org.ID)
		if err != nil || len(ms) != 1 {
			t.Fatalf("Members() = %v, %v", ms, err)
		}
		owner := licentia.MemberActor(ms[0].ID)
		_, key, err := e.admin.CreateAPIKey(t.Context(), owner, e.org.ID, admin.NewAPIKey{Name: "billing robot", Scopes: []licentia.Scope{licentia.ScopeLicencesWrite}})
		if err != nil {
			t.Fatal(err)
		}
		lv := e.issue(t, e.org.ID, "desk-app", "ada@example.com")
		e.clock.Advance(24 * time.Hour)
		if _, err := e.admin.RevokeLicence(t.Context(), licentia.APIKeyActor(key.ID), e.org.ID, lv.Licence.ID, admin.Reason("refund asked")); err != nil {
			t.Fatal(err)
		}
		if _, err := e.admin.ReinstateLicence(t.Context(), owner, e.org.ID, lv.Licence.ID, admin.Reason("kept")); err != nil {
			t.Fatal(err)
		}

		c := e.owner(t)
		history := c.get(t, "/console/licences/"+lv.Licence.ID)
		log := c.get(t, "/console/audit")
		for name, page := range map[string]answer{"history": history, "audit log": log} {
			wantStatus(t, name, page, http.StatusOK)
			for _, want := range []string{"API key billing robot", "owner@acme.example", "From active to revoked. Reason: refund asked.",
				"Licence reinstated", "Issued to ada@example.com for 2 seats; expires never."} {
				if !strings.Contains(page.body, want) {
					t.Errorf("%s lacks %q", name, want)
				}
			}
			table := page.body[strings.Index(page.body, "<table class=\"history"):]
			table = table[:strings.Index(table, "</table>")]
			if strings.Contains(table, "{&#34;") || strings.Contains(table, `{"`) || uuidText.MatchString(table) {
				t.Errorf("%s shows raw JSON or a bare id:\n%s", name, table)
			}
		}

		filtered := func(q url.Values) string {
			t.Helper()
			a := c.get(t, "/console/audit?"+q.Encode())
			wantStatus(t, "filtered log "+q.Encode(), a, http.StatusOK)
			rest := a.body[strings.Index(a.body, `class="row filters"`):]
			return rest[strings.Index(rest, "</form>"):]
		}
		if b := filtered(url.Values{"action": {"licence.revoked"}}); !strings.Contains(b, "Licence revoked") || strings.Contains(b, "Licence reinstated") {
			t.Errorf("action filter keeps other actions")
		}
		b := filtered(url.Values{"actor": {"api_key:" + key.ID}})
		if !strings.Contains(b, "Licence revoked") || strings.Contains(b, "Licence issued") {
			t.Errorf("actor filter keeps other actors")
		}
		today := e.clock.Now().Format(time.DateOnly)
		b = filtered(url.Values{"from": {today}, "to": {today}})
		if !strings.Contains(b, "Licence revoked") || strings.Contains(b, "Licence issued") || strings.Contains(b, "API key created") {
			t.Errorf("date filter keeps yesterday's entries")
		}
		if b := filtered(url.Values{"to": {start.AddDate(0, 0, -1).Format(time.DateOnly)}}); !strings.Contains(b, "Nothing matches these filters.") {
			t.Errorf("a filter matching nothing does not say so")
		}
		bad := c.get(t, "/console/audit?from=yesterday")
		wantStatus(t, "unreadable date", bad, http.StatusBadRequest)
	})
}

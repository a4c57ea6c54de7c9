package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// events lists the types of the organization's events, oldest first.
func (e *env) events(t *testing.T) []licentia.EventType {
	t.Helper()
	es, err := e.store.OrganizationEvents(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []licentia.EventType
	for _, ev := range es {
		out = append(out, ev.Type)
	}
	return out
}

// lastAudit is the organization's newest audit entry.
func (e *env) lastAudit(t *testing.T) licentia.AuditEntry {
	t.Helper()
	es, err := e.store.AuditPage(t.Context(), e.org.ID, store.AuditQuery{}, 1)
	if err != nil || len(es) != 1 {
		t.Fatalf("AuditPage() = %v, %v", es, err)
	}
	return es[0]
}

// wantMemberActor fails unless the newest audit entry is action by member.
func wantMemberActor(t *testing.T, e *env, action, memberID string) {
	t.Helper()
	got := e.lastAudit(t)
	if got.Action != action || got.Actor.Type != licentia.ActorMember || got.Actor.ID == nil || *got.Actor.ID != memberID {
		t.Errorf("last audit entry = %s by %+v, want %s by member %s", got.Action, got.Actor, action, memberID)
	}
}

var licencePath = regexp.MustCompile(`^/console/licences/([0-9a-f-]{36})\?done=issued$`)

// A licence's life in the console: issued (source admin, licence.issued,
// the member as the audit actor), found by email and by key, read with its
// key and machines, a machine freed, revoked, expired and reinstated with
// reasons, and anonymised once the member types the confirmation.
func TestLicenceLifecycle(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		supportMember := e.member(t, e.org.ID, "support@acme.example", licentia.RoleSupport)
		c := e.signUp(t, e.org.ID, "support@acme.example")

		// A refused issue shows the form again with each field's problem.
		a := c.post(t, "/console/licences", url.Values{"product_id": {"desk-app"}, "email": {"not an address"},
			"limit_count": {"0"}, "expires_at": {"tomorrow"}})
		wantStatus(t, "issue with bad fields", a, http.StatusBadRequest)
		if strings.Contains(a.body, "/limit_count") || strings.Contains(a.body, "/expires_at") {
			t.Errorf("refused issue shows API paths:\n%s", a.body)
		}
		for _, want := range []string{"Check the fields marked below.", `value="not an address"`, "Expires: must be a date", `<span class="field-error">Limit: must be`} {
			if !strings.Contains(a.body, want) {
				t.Errorf("refused issue lacks %q:\n%s", want, a.body)
			}
		}

		a = c.post(t, "/console/licences", url.Values{"product_id": {"desk-app"}, "email": {"ada@example.com"},
			"limit_kind": {"machines"}, "limit_count": {"3"}, "expires_at": {"2027-01-31"}, "external_ref": {"crm-42"}})
		m := licencePath.FindStringSubmatch(a.location())
		if a.status != http.StatusSeeOther || m == nil {
			t.Fatalf("issue = %d to %q, want 303 to the licence:\n%s", a.status, a.location(), a.body)
		}
		id := m[1]
		l, err := e.store.Licence(t.Context(), e.org.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if l.Source != licentia.SourceAdmin || l.LimitKind != licentia.LimitMachines || l.LimitCount != 3 ||
			l.ExpiresAt == nil || l.ExpiresAt.Format("2006-01-02T15:04") != "2027-01-31T23:59" || *l.ExternalRef != "crm-42" {
			t.Errorf("issued licence = %+v", l)
		}
		if evs := e.events(t); len(evs) != 1 || evs[0] != licentia.EventLicenceIssued {
			t.Errorf("events = %v, want licence.issued", evs)
		}
		wantMemberActor(t, e, licentia.AuditLicenceIssued, supportMember.ID)

		page := c.get(t, "/console/licences/"+id+"?done=issued")
		key := keyOf(t, page.body)
		if !strings.Contains(page.body, "The licence was issued.") {
			t.Errorf("licence page lacks the notice")
		}
		for _, q := range []string{"ada@example.com", "ADA@", key, id, "crm-42"} {
			found := c.get(t, "/console/licences?q="+url.QueryEscape(q))
			if !strings.Contains(found.body, `href="/console/licences/`+id+`"`) {
				t.Errorf("find %q does not list the licence:\n%s", q, found.body)
			}
		}
		if found := c.get(t, "/console/licences?q=nobody"); !strings.Contains(found.body, "No licence matches.") {
			t.Errorf("find of nothing does not say so:\n%s", found.body)
		}

		act := e.activate(t, key, "machine-1")
		page = c.get(t, "/console/licences/"+id)
		if !strings.Contains(page.body, "machine-1") || !strings.Contains(page.body, "/console/activations/"+act.ID+"/deactivate") {
			t.Fatalf("licence page lacks the machine and its free button:\n%s", page.body)
		}
		wantSeeOther(t, "free", c.post(t, "/console/activations/"+act.ID+"/deactivate", url.Values{}), "/console/licences/"+id+"?done=freed")
		wantMemberActor(t, e, licentia.AuditActivationDeactivated, supportMember.ID)
		wantSeeOther(t, "free again", c.post(t, "/console/activations/"+act.ID+"/deactivate", url.Values{}), "/console/licences/"+id+"?done=unchanged")

		a = c.post(t, "/console/licences/"+id+"/revoke", url.Values{"reason": {""}})
		wantStatus(t, "revoke without a reason", a, http.StatusBadRequest)
		if !strings.Contains(a.body, "is required") {
			t.Errorf("refused revoke lacks the reason's problem:\n%s", a.body)
		}
		for _, step := range []struct{ op, done string }{{"revoke", "revoked"}, {"expire", "expired"}, {"reinstate", "reinstated"}} {
			wantSeeOther(t, step.op, c.post(t, "/console/licences/"+id+"/"+step.op, url.Values{"reason": {"support ticket 7"}}),
				"/console/licences/"+id+"?done="+step.done)
		}
		wantSeeOther(t, "reinstate again", c.post(t, "/console/licences/"+id+"/reinstate", url.Values{"reason": {"again"}}),
			"/console/licences/"+id+"?done=unchanged")
		want := []licentia.EventType{licentia.EventLicenceIssued, licentia.EventActivationCreated, licentia.EventActivationDeactivated,
			licentia.EventLicenceRevoked, licentia.EventLicenceExpired, licentia.EventLicenceReinstated}
		if got := e.events(t); strings.Join(eventNames(got), ",") != strings.Join(eventNames(want), ",") {
			t.Errorf("events = %v, want %v", got, want)
		}

		// Anonymising takes an admin and the typed confirmation.
		admin := e.as(t, licentia.RoleAdmin)
		a = admin.post(t, "/console/licences/"+id+"/anonymise", url.Values{"confirm": {"yes"}})
		wantStatus(t, "anonymise without the word", a, http.StatusBadRequest)
		if !strings.Contains(a.body, "type anonymise to confirm") {
			t.Errorf("refused anonymise does not ask for the word:\n%s", a.body)
		}
		if l, _ := e.store.Licence(t.Context(), e.org.ID, id); l.AnonymisedAt != nil {
			t.Fatal("anonymised without the confirmation")
		}
		wantSeeOther(t, "anonymise", admin.post(t, "/console/licences/"+id+"/anonymise", url.Values{"confirm": {"anonymise"}}),
			"/console/licences/"+id+"?done=anonymised")
		page = admin.get(t, "/console/licences/"+id)
		if strings.Contains(page.body, "ada@example.com") || strings.Contains(page.body, key) || !strings.Contains(page.body, "anonymised") {
			t.Errorf("anonymised licence page still shows the address or key:\n%s", page.body)
		}
		if strings.Contains(page.body, `/revoke"`) || strings.Contains(page.body, `/anonymise"`) {
			t.Errorf("anonymised licence still offers changes")
		}
	})
}

var keyRE = regexp.MustCompile(`<th>Licence key</th><td><code class="secret">([^<]+)</code>`)

func keyOf(t *testing.T, body string) string {
	t.Helper()
	m := keyRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("licence page shows no key:\n%s", body)
	}
	return m[1]
}

func eventNames(ts []licentia.EventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// Another organization's licence answers like a missing one.
func TestLicenceOfAnotherOrganization(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.owner(t)
	other := e.otherOrg(t)
	e.product(t, other.ID, "their-app", "THEIR")
	theirs := e.issue(t, other.ID, "their-app", "x@example.com")
	for _, a := range []answer{
		c.get(t, "/console/licences/"+theirs.Licence.ID),
		c.post(t, "/console/licences/"+theirs.Licence.ID+"/revoke", url.Values{"reason": {"x"}}),
		c.get(t, "/console/licences/not-a-uuid"),
	} {
		wantStatus(t, "another organization's licence", a, http.StatusNotFound)
	}
	if l, _ := e.store.Licence(t.Context(), other.ID, theirs.Licence.ID); l.Status != licentia.StatusActive {
		t.Error("another organization's licence was revoked")
	}
}

// A find the operation refuses shows its problem over the find form.
func TestFindRefused(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.owner(t)
	a := c.get(t, "/console/licences?q="+strings.Repeat("x", 2049))
	wantStatus(t, "find too long a query", a, http.StatusBadRequest)
	if !strings.Contains(a.body, "must be 1 to 2048 characters") {
		t.Errorf("refused find lacks the rule:\n%s", a.body)
	}
}

package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// TestBrandingInTheConsole: an owner sets the branding with a plain form;
// a refused form comes back with each problem in words next to its field
// and what was typed; the saved branding shows on the page, reads back
// with the organization, and is audited on it.
func TestBrandingInTheConsole(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		c := e.owner(t)
		page := c.get(t, "/console/branding")
		wantStatus(t, "branding page", page, http.StatusOK)
		if !strings.Contains(page.body, "(the organization's name)") {
			t.Errorf("branding page does not say the name shows by default:\n%s", page.body)
		}

		bad := url.Values{"display_name": {strings.Repeat("x", 101)}, "support_email": {"help@"}, "logo_url": {"http://acme.example/logo.png"},
			"accent": {"blue"}}
		a := c.post(t, "/console/branding", bad)
		wantStatus(t, "refused branding", a, http.StatusBadRequest)
		for _, want := range []string{"must be 1 to 100 characters", "must be an https address", "must be a colour written #rrggbb",
			`value="http://acme.example/logo.png"`, `value="blue"`} {
			if !strings.Contains(a.body, want) {
				t.Errorf("refused form lacks %q:\n%s", want, a.body)
			}
		}

		good := url.Values{"display_name": {"Acme Tools"}, "support_email": {"help@acme.example"},
			"logo_url": {"https://acme.example/logo.png"}, "accent": {"#0A7CFF"}}
		wantSeeOther(t, "save branding", c.post(t, "/console/branding", good), "/console/branding?done=branding-saved")
		page = c.get(t, "/console/branding?done=branding-saved")
		for _, want := range []string{"The branding was saved", "Acme Tools", "help@acme.example", "https://acme.example/logo.png", "#0a7cff"} {
			if !strings.Contains(page.body, want) {
				t.Errorf("branding page lacks %q:\n%s", want, page.body)
			}
		}
		org, err := e.store.Organization(t.Context(), e.org.ID)
		if err != nil || org.DisplayName() != "Acme Tools" || *org.Branding.Accent != "#0a7cff" {
			t.Errorf("organization after saving = %+v, %v", org, err)
		}
		audit, _ := e.store.OrganizationAudit(t.Context(), e.org.ID)
		if last := audit[len(audit)-1]; last.Action != licentia.AuditBrandingUpdated || last.Actor.Type != licentia.ActorMember {
			t.Errorf("last audit entry = %s by %s, want organization.branding_updated by the member", last.Action, last.Actor.Type)
		}

		// Emptied fields are unset again.
		wantSeeOther(t, "clear branding", c.post(t, "/console/branding", url.Values{"display_name": {""}, "accent": {""}}),
			"/console/branding?done=branding-saved")
		if org, _ := e.store.Organization(t.Context(), e.org.ID); org.DisplayName() != e.org.Name || org.Branding.SupportEmail != nil {
			t.Errorf("organization after clearing = %+v", org.Branding)
		}
	})
}

// TestMailKeyInTheConsole: a licence's key is mailed from its page, and on
// issue when the box is ticked; past the daily limit the page says so; a
// revoked licence offers no key mail.
func TestMailKeyInTheConsole(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		c := e.as(t, licentia.RoleSupport)
		a := c.post(t, "/console/licences", url.Values{"product_id": {"desk-app"}, "email": {"ada@example.com"}, "send_key_mail": {"true"}})
		wantStatus(t, "issue with key mail", a, http.StatusSeeOther)
		id := strings.TrimPrefix(strings.Split(a.location(), "?")[0], "/console/licences/")
		page := c.get(t, "/console/licences/"+id)
		if !strings.Contains(page.body, `action="/console/licences/`+id+`/send-key"`) {
			t.Fatalf("licence page offers no key mail:\n%s", page.body)
		}
		for range 4 {
			wantSeeOther(t, "mail the key", c.post(t, "/console/licences/"+id+"/send-key", url.Values{}),
				"/console/licences/"+id+"?done=key-mailed")
		}
		a = c.post(t, "/console/licences/"+id+"/send-key", url.Values{})
		wantStatus(t, "the 6th key mail", a, http.StatusTooManyRequests)
		if !strings.Contains(a.body, "at most 5 times in 24 hours") {
			t.Errorf("refused key mail does not say the limit:\n%s", a.body)
		}
		n, err := e.store.CountLicenceMails(t.Context(), e.org.ID, id, licentia.MailKey, start)
		if n != 5 || err != nil {
			t.Errorf("key mails queued = %d, %v, want 5 (1 on issue)", n, err)
		}
		revoked := e.issue(t, e.org.ID, "desk-app", "bob@example.com")
		wantStatus(t, "revoke", c.post(t, "/console/licences/"+revoked.Licence.ID+"/revoke", url.Values{"reason": {"refund"}}), http.StatusSeeOther)
		if page := c.get(t, "/console/licences/"+revoked.Licence.ID); strings.Contains(page.body, "/send-key") {
			t.Errorf("a revoked licence's page offers a key mail")
		}
	})
}

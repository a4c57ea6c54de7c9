package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/licentia"
)

// roleAtLeast is the need of a form only roles from min up may use.
func roleAtLeast(min licentia.Role) func(licentia.Role) bool {
	return func(r licentia.Role) bool { return r.AtLeast(min) }
}

// Each role sees the forms its role allows and no others, and a forged
// post of a form it cannot see is refused 403 and changes nothing, while
// the roles that may use it succeed: the console holds the API's role
// rules.
func TestRolesInTheConsole(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		for _, role := range licentia.Roles {
			t.Run(string(role), func(t *testing.T) {
				var c *client
				if role == licentia.RoleOwner {
					c = e.owner(t)
				} else {
					c = e.as(t, role)
				}
				lic := e.issue(t, e.org.ID, "desk-app", string(role)+"-buyer@example.com")
				act := e.activate(t, *lic.Key, "machine-"+string(role))
				licencePage := "/console/licences/" + lic.Licence.ID

				for _, f := range []struct {
					page, form string
					may        func(licentia.Role) bool
				}{
					{"/console/licences", `method="post" action="/console/licences"`, roleAtLeast(licentia.RoleSupport)},
					{licencePage, `/revoke"`, roleAtLeast(licentia.RoleSupport)},
					{licencePage, `/deactivate"`, roleAtLeast(licentia.RoleSupport)},
					{licencePage, `/anonymise"`, roleAtLeast(licentia.RoleAdmin)},
					{"/console/products", `method="post" action="/console/products"`, roleAtLeast(licentia.RoleDeveloper)},
					{"/console/webhooks", `method="post" action="/console/webhooks"`, roleAtLeast(licentia.RoleDeveloper)},
					{"/console/integrations", `method="post" action="/console/integrations"`, licentia.Role.CanConnectIntegrations},
					{"/console/team", `action="/console/team/invitations"`, roleAtLeast(licentia.RoleAdmin)},
					{"/console/", `href="/console/api-keys"`, licentia.Role.CanManageAPIKeys},
					{"/console/branding", `action="/console/branding"`, licentia.Role.CanChangeBranding},
				} {
					a := c.get(t, f.page)
					wantStatus(t, f.page, a, http.StatusOK)
					if got, want := strings.Contains(a.body, f.form), f.may(role); got != want {
						t.Errorf("%s shows %s: %t, want %t", f.page, f.form, got, want)
					}
				}

				apiKeys := c.get(t, "/console/api-keys")
				if role.CanManageAPIKeys() {
					wantStatus(t, "API keys page", apiKeys, http.StatusOK)
				} else {
					wantStatus(t, "API keys page", apiKeys, http.StatusForbidden)
				}

				slug := string(role)
				for _, p := range []struct {
					name string
					path string
					form url.Values
					may  func(licentia.Role) bool
				}{
					{"issue a licence", "/console/licences", url.Values{"product_id": {"desk-app"}, "email": {slug + "@example.com"}},
						roleAtLeast(licentia.RoleSupport)},
					{"free a machine", "/console/activations/" + act.ID + "/deactivate", url.Values{},
						roleAtLeast(licentia.RoleSupport)},
					{"create a product", "/console/products", url.Values{"id": {"app-" + slug}, "name": {"App " + slug},
						"key_prefix": {strings.ToUpper(slug[:3])}, "current_major": {"1"}}, roleAtLeast(licentia.RoleDeveloper)},
					{"add a webhook", "/console/webhooks", url.Values{"url": {"https://hooks.example.com/" + slug},
						"event_types": {"licence.issued"}}, roleAtLeast(licentia.RoleDeveloper)},
					{"anonymise", licencePage + "/anonymise", url.Values{"confirm": {"anonymise"}}, roleAtLeast(licentia.RoleAdmin)},
					{"connect an integration", "/console/integrations", url.Values{"provider": {"stripe"}, "name": {"Shop " + slug},
						"api_key": {shopKey}}, licentia.Role.CanConnectIntegrations},
					{"invite", "/console/team/invitations", url.Values{"email": {"invitee-" + slug + "@acme.example"}, "role": {"viewer"}},
						roleAtLeast(licentia.RoleAdmin)},
					{"create an API key", "/console/api-keys", url.Values{"name": {"ci"}, "scopes": {"licences:read"}},
						licentia.Role.CanManageAPIKeys},
					{"change the branding", "/console/branding", url.Values{"display_name": {"Brand " + slug}},
						licentia.Role.CanChangeBranding},
				} {
					a := c.post(t, p.path, p.form)
					if p.may(role) {
						if a.status != http.StatusSeeOther && a.status != http.StatusCreated {
							t.Errorf("%s as %s = %d, want success:\n%s", p.name, role, a.status, a.body)
						}
						continue
					}
					if a.status != http.StatusForbidden || !strings.Contains(a.body, "The "+slug+" role cannot") {
						t.Errorf("forged %s as %s = %d, want 403 naming the role:\n%s", p.name, role, a.status, a.body)
					}
				}
				// The refused posts changed nothing.
				if l, err := e.store.Licence(t.Context(), e.org.ID, lic.Licence.ID); err != nil ||
					(l.AnonymisedAt != nil) != role.AtLeast(licentia.RoleAdmin) ||
					(l.LiveActivations == 0) != role.AtLeast(licentia.RoleSupport) {
					t.Errorf("licence after %s's posts = %+v, %v", role, l, err)
				}
				if _, err := e.store.Product(t.Context(), e.org.ID, "app-"+slug); (err == nil) != role.AtLeast(licentia.RoleDeveloper) {
					t.Errorf("product app-%s exists: %t, want %t", slug, err == nil, role.AtLeast(licentia.RoleDeveloper))
				}
			})
		}
	})
}

var newKey = regexp.MustCompile(`id="new-key">([^<]+)<`)

// An owner creates an API key with chosen scopes and an optional expiry:
// the key is shown on that answer only, works at once, and is revoked from
// the list.
func TestAPIKeys(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		c := e.owner(t)
		a := c.post(t, "/console/api-keys", url.Values{"name": {"deploy"}, "scopes": {"licences:read", "products:read"},
			"expires_at": {"2026-12-31T23:59"}})
		wantStatus(t, "create", a, http.StatusCreated)
		m := newKey.FindStringSubmatch(a.body)
		if m == nil {
			t.Fatalf("the new key is not shown:\n%s", a.body)
		}
		key := m[1]
		caller, err := auth.NewAuthenticator(e.store, e.clock).Authenticate(t.Context(), "Bearer "+key)
		if err != nil {
			t.Fatalf("Authenticate(new key) error = %v", err)
		}
		if !caller.HasScope(licentia.ScopeLicencesRead) || caller.HasScope(licentia.ScopeLicencesWrite) || caller.OrgID != e.org.ID {
			t.Errorf("caller = %+v, want the organization's key with licences:read and products:read only", caller)
		}
		ks, err := e.store.APIKeys(t.Context(), e.org.ID)
		if err != nil || len(ks) != 1 || ks[0].ExpiresAt == nil || !ks[0].ExpiresAt.Equal(time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC)) {
			t.Fatalf("APIKeys() = %+v, %v; want one key expiring 2026-12-31T23:59Z", ks, err)
		}
		if strings.Contains(string(ks[0].Hash), key) {
			t.Error("the key is stored in clear")
		}
		list := c.get(t, "/console/api-keys")
		if strings.Contains(list.body, key) || !strings.Contains(list.body, ks[0].Prefix) {
			t.Errorf("the list shows the key again, or not its prefix:\n%s", list.body)
		}
		// Validation is the operation's: no scope, members:write, a past expiry.
		a = c.post(t, "/console/api-keys", url.Values{"name": {"bad"}, "scopes": {"members:write"}, "expires_at": {"2020-01-01"}})
		wantStatus(t, "create with bad fields", a, http.StatusBadRequest)
		for _, want := range []string{"must be in the future", "cannot be held by a key"} {
			if !strings.Contains(a.body, want) {
				t.Errorf("refused form lacks %q:\n%s", want, a.body)
			}
		}
		wantSeeOther(t, "revoke", c.post(t, "/console/api-keys/"+ks[0].ID+"/revoke", url.Values{}), "/console/api-keys?done=key-revoked")
		if _, err := auth.NewAuthenticator(e.store, e.clock).Authenticate(t.Context(), "Bearer "+key); licentia.ErrorCode(err) != licentia.CodeUnauthorized {
			t.Errorf("Authenticate(revoked key) error = %v, want unauthorized", err)
		}
	})
}

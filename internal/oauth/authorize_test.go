package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestAuthorizeRefusedOnPage: an unknown client or a redirect URI it did
// not register is shown on a page and never redirected to, whether the
// visitor is signed in or not.
func TestAuthorizeRefusedOnPage(t *testing.T) {
	e := newEnv(t, storetest.OpenSQLite)
	e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
	c := e.register(t, "Claude Desktop")
	good := e.authorizeURL(c, "s")
	signedIn := e.signedIn(t, "ada@acme.example")
	for _, tt := range []struct {
		name string
		edit func(q url.Values)
	}{
		{"unknown client", func(q url.Values) { q.Set("client_id", "NOTACLIENT") }},
		{"no client", func(q url.Values) { q.Del("client_id") }},
		{"two clients", func(q url.Values) { q.Add("client_id", c.id) }},
		{"another redirect URI", func(q url.Values) { q.Set("redirect_uri", "https://evil.example/cb") }},
		{"a longer redirect URI", func(q url.Values) { q.Set("redirect_uri", redirectURI+"/more") }},
		{"another port", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:1/callback") }},
		{"no redirect URI", func(q url.Values) { q.Del("redirect_uri") }},
		{"two redirect URIs", func(q url.Values) { q.Add("redirect_uri", redirectURI) }},
	} {
		u, _ := url.Parse(good)
		q := u.Query()
		tt.edit(q)
		path := "/oauth/authorize?" + q.Encode()
		for who, b := range map[string]*browser{"visitor": e.browser(), "member": signedIn} {
			a := b.get(t, path)
			if a.status != http.StatusBadRequest || a.location() != "" || !strings.Contains(a.body, "cannot be used") {
				t.Errorf("%s as %s: %d to %q, want 400 on a page:\n%s", tt.name, who, a.status, a.location(), a.body)
			}
		}
	}
}

// TestAuthorizeRefusedToClient: once the client and its redirect URI are
// known, a refusal goes back there with the error, the state and the
// issuer: PKCE missing, the plain method, another resource, another
// response type, a parameter given twice. It does so before any sign-in.
func TestAuthorizeRefusedToClient(t *testing.T) {
	e := newEnv(t, storetest.OpenSQLite)
	c := e.register(t, "Claude Desktop")
	good := e.authorizeURL(c, "st-9")
	for _, tt := range []struct {
		name string
		edit func(q url.Values)
		code string
	}{
		{"no challenge", func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }, "invalid_request"},
		{"no method", func(q url.Values) { q.Del("code_challenge_method") }, "invalid_request"},
		{"plain", func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		{"short challenge", func(q url.Values) { q.Set("code_challenge", "abc") }, "invalid_request"},
		{"challenge with padding", func(q url.Values) { q.Set("code_challenge", q.Get("code_challenge")[:42]+"=") }, "invalid_request"},
		{"another resource", func(q url.Values) { q.Set("resource", "https://other.example/mcp") }, "invalid_target"},
		{"the API as resource", func(q url.Values) { q.Set("resource", e.base) }, "invalid_target"},
		{"two resources", func(q url.Values) { q.Add("resource", e.base+"/mcp") }, "invalid_request"},
		{"token response type", func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		{"no response type", func(q url.Values) { q.Del("response_type") }, "invalid_request"},
		{"two states", func(q url.Values) { q.Add("state", "other") }, "invalid_request"},
	} {
		u, _ := url.Parse(good)
		q := u.Query()
		tt.edit(q)
		a := e.browser().get(t, "/oauth/authorize?"+q.Encode())
		to, err := url.Parse(a.location())
		if a.status != http.StatusSeeOther || err != nil || !strings.HasPrefix(a.location(), redirectURI+"?") {
			t.Errorf("%s: %d to %q, want 303 to the redirect URI:\n%s", tt.name, a.status, a.location(), a.body)
			continue
		}
		got := to.Query()
		if got.Get("error") != tt.code || got.Get("error_description") == "" || got.Get("state") != "st-9" || got.Get("iss") != e.base {
			t.Errorf("%s: redirected with %v, want error %s, state st-9 and iss", tt.name, got, tt.code)
		}
	}

	// Without resource, the request is for the MCP server all the same.
	u, _ := url.Parse(good)
	q := u.Query()
	q.Del("resource")
	a := e.browser().get(t, "/oauth/authorize?"+q.Encode())
	if a.status != http.StatusSeeOther || !strings.HasPrefix(a.location(), "/console/sign-in?next=") {
		t.Errorf("without resource: %d to %q, want 303 to sign in", a.status, a.location())
	}
	next, _ := url.Parse(a.location())
	if n := next.Query().Get("next"); n != "/oauth/authorize?"+q.Encode() {
		t.Errorf("sign-in next = %q, want the authorization request", n)
	}
}

// TestConsentForm: the form is refused from another site, with a decision
// other than allow or deny, or for an organization the member is not in;
// its parameters are checked again; a visitor whose session ended is sent
// to sign in and back to the request.
func TestConsentForm(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		m := e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
		c := e.register(t, "Claude Desktop")
		path := e.authorizeURL(c, "s")
		b := e.signedIn(t, "ada@acme.example")
		page := b.get(t, path)
		form := consentForm(t, page.body)
		if form.Get("org") != e.org.ID {
			t.Fatalf("consent form org = %q, want %s", form.Get("org"), e.org.ID)
		}

		with := func(k, v string) url.Values {
			f := url.Values{}
			for key, vs := range form {
				f[key] = vs
			}
			f.Set("decision", "allow")
			f.Set(k, v)
			return f
		}
		a := b.do(t, http.MethodPost, "/oauth/authorize", with("decision", "allow").Encode(), map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
		if a.status != http.StatusForbidden || a.location() != "" {
			t.Errorf("a cross-site consent: %d to %q, want 403", a.status, a.location())
		}
		if a := b.post(t, "/oauth/authorize", with("decision", "maybe")); a.status != http.StatusBadRequest || a.location() != "" {
			t.Errorf("decision maybe: %d to %q, want 400", a.status, a.location())
		}
		other := e.otherOrg(t)
		if a := b.post(t, "/oauth/authorize", with("org", other.ID)); a.status != http.StatusForbidden || a.location() != "" {
			t.Errorf("another organization: %d to %q, want 403", a.status, a.location())
		}
		if a := b.post(t, "/oauth/authorize", with("code_challenge_method", "plain")); a.status != http.StatusSeeOther ||
			!strings.Contains(a.location(), "error=invalid_request") {
			t.Errorf("a plain challenge posted: %d to %q, want the refusal sent to the client", a.status, a.location())
		}
		if a := b.post(t, "/oauth/authorize", with("redirect_uri", "https://evil.example/cb")); a.status != http.StatusBadRequest || a.location() != "" {
			t.Errorf("another redirect URI posted: %d to %q, want 400 on a page", a.status, a.location())
		}
		if gs, _ := e.store.Grants(t.Context(), e.org.ID, m.ID); len(gs) != 0 {
			t.Errorf("refused consents made grants: %+v", gs)
		}

		a = e.browser().post(t, "/oauth/authorize", with("decision", "allow"))
		if a.status != http.StatusSeeOther || !strings.HasPrefix(a.location(), "/console/sign-in?next=") {
			t.Fatalf("consent without a session: %d to %q, want 303 to sign in", a.status, a.location())
		}
		next, _ := url.Parse(a.location())
		back, _ := url.Parse(next.Query().Get("next"))
		if back.Path != "/oauth/authorize" || back.Query().Get("code_challenge") != form.Get("code_challenge") || back.Query().Has("decision") {
			t.Errorf("sign-in next = %q, want the authorization request without the decision", next.Query().Get("next"))
		}
	})
}

// TestConsentOrganization: a member of two organizations chooses on the
// consent page which one the assistant acts in, each shown with the
// member's role there; the session's organization comes first.
func TestConsentOrganization(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		other := e.otherOrg(t)
		e.member(t, e.org.ID, "ada@acme.example", licentia.RoleViewer)
		there := e.member(t, other.ID, "ada@acme.example", licentia.RoleDeveloper)
		c := e.register(t, "Claude Desktop")
		path := e.authorizeURL(c, "s")
		b := e.signedIn(t, "ada@acme.example")
		page := b.get(t, path)
		for _, want := range []string{"Acme (your role: viewer)", "Beta Works (your role: developer)"} {
			if !strings.Contains(page.body, want) {
				t.Errorf("the consent page does not offer %q:\n%s", want, page.body)
			}
		}
		form := consentForm(t, page.body)
		form.Set("org", other.ID)
		form.Set("decision", "allow")
		a := b.post(t, "/oauth/authorize", form)
		to, _ := url.Parse(a.location())
		tok, err := c.conf.Exchange(e.ctx(t), to.Query().Get("code"), oauth2VerifierOption(c))
		if err != nil {
			t.Fatalf("Exchange() error = %v", err)
		}
		org := e.api(t, tok.AccessToken)
		if org.status != http.StatusOK || org.json(t)["organization"].(map[string]any)["id"] != other.ID {
			t.Errorf("the token acts in %s, want %s", org.body, other.ID)
		}
		if gs, _ := e.store.Grants(t.Context(), other.ID, there.ID); len(gs) != 1 {
			t.Errorf("Grants() in the organization chosen = %+v, want one", gs)
		}
	})
}

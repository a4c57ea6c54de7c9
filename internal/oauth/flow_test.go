package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// TestCodeFlow runs the whole flow as an AI assistant would: registration,
// an authorization request with PKCE, console sign-in and the consent form,
// then the token exchange; the access token acts as the member on the
// administration routes, with the member's role.
func TestCodeFlow(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		m := e.member(t, e.org.ID, "ada@acme.example", licentia.RoleSupport)
		c := e.register(t, "Claude Desktop")
		path := e.authorizeURL(c, "xyz-state")
		page, to := e.consent(t, "ada@acme.example", path, "allow")

		for _, want := range []string{"Claude Desktop", "127.0.0.1:33418", "Acme", "support", "anonymise a licence",
			"create or change a product", "webhook endpoint"} {
			if !strings.Contains(page.body, want) {
				t.Errorf("the consent page does not name %q:\n%s", want, page.body)
			}
		}
		csp := page.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "form-action 'self' http://127.0.0.1:33418;") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("consent page Content-Security-Policy = %q, want form-action extended with the redirect URI's origin", csp)
		}

		if got := to.Scheme + "://" + to.Host + to.Path; got != redirectURI {
			t.Errorf("redirected to %s, want %s", got, redirectURI)
		}
		q := to.Query()
		if q.Get("state") != "xyz-state" || q.Get("iss") != e.base || len(q.Get("code")) != 43 {
			t.Errorf("redirect query = %v, want code, state xyz-state and iss %s", q, e.base)
		}

		form := url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {redirectURI},
			"client_id": {c.id}, "code_verifier": {c.verifier}, "resource": {e.base + "/mcp"}}
		a := e.tokenRequest(t, form)
		if a.status != http.StatusOK || a.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("token: %d, Cache-Control %q\n%s", a.status, a.header.Get("Cache-Control"), a.body)
		}
		tok := a.json(t)
		access, _ := tok["access_token"].(string)
		refresh, _ := tok["refresh_token"].(string)
		if !strings.HasPrefix(access, "licentia_oat_") || !strings.HasPrefix(refresh, "licentia_ort_") ||
			tok["token_type"] != "Bearer" || tok["expires_in"] != float64(3600) || len(tok) != 4 {
			t.Errorf("token answer = %v, want a Bearer access token for 3600 s and a refresh token", tok)
		}

		a = e.api(t, access)
		if a.status != http.StatusOK || a.json(t)["organization"].(map[string]any)["id"] != e.org.ID {
			t.Fatalf("GET /v1/admin/organization with the access token: %d\n%s", a.status, a.body)
		}
		gs, err := e.store.Grants(t.Context(), e.org.ID, m.ID)
		if err != nil || len(gs) != 1 || gs[0].ClientID != c.id || gs[0].ClientName != "Claude Desktop" {
			t.Fatalf("Grants() = %+v, %v, want one grant to the client", gs, err)
		}
		entries := audit(t, e, licentia.AuditGrantCreated)
		if len(entries) != 1 || entries[0].Actor.Type != licentia.ActorMember || *entries[0].Actor.ID != m.ID {
			t.Errorf("grant.created entries = %+v, want one by the member", entries)
		}

		// An hour later the access token is refused; the refresh token
		// still gives a new one.
		e.clock.Advance(time.Hour)
		if a := e.api(t, access); a.status != http.StatusUnauthorized {
			t.Errorf("an expired access token: %d, want 401", a.status)
		}
		next, err := e.refresh(t, c, refresh)
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if a := e.api(t, next.AccessToken); a.status != http.StatusOK {
			t.Errorf("the refreshed access token: %d, want 200\n%s", a.status, a.body)
		}
	})
}

// audit returns the organization's audit entries of action.
func audit(t *testing.T, e *env, action string) []licentia.AuditEntry {
	t.Helper()
	all, err := e.store.OrganizationAudit(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []licentia.AuditEntry
	for _, a := range all {
		if a.Action == action {
			out = append(out, a)
		}
	}
	return out
}

// TestAssistantActsWithRole: the token acts with the member's role at
// each request: a viewer's assistant reads and may not issue, and after a
// demotion an admin's assistant loses what the new role lacks.
func TestAssistantActsWithRole(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		m := e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
		tok := e.authorize(t, e.register(t, "Cursor"), "ada@acme.example")
		invite := func() answer {
			return e.browser().do(t, http.MethodGet, "/v1/admin/members", "", map[string]string{"Authorization": "Bearer " + tok.AccessToken})
		}
		if a := invite(); a.status != http.StatusOK {
			t.Fatalf("GET /v1/admin/members as an admin's assistant: %d\n%s", a.status, a.body)
		}
		anonymise := e.browser().do(t, http.MethodPost, "/v1/admin/licences/"+licentia.NewID()+"/anonymise", "{}",
			map[string]string{"Authorization": "Bearer " + tok.AccessToken, "Content-Type": "application/json"})
		if anonymise.status != http.StatusForbidden || !strings.Contains(anonymise.body, "insufficient_scope") {
			t.Errorf("anonymise as an admin's assistant: %d, want 403 insufficient_scope\n%s", anonymise.status, anonymise.body)
		}
		if err := e.store.InTx(t.Context(), func(tx store.Tx) error {
			return tx.SetMemberRole(t.Context(), e.org.ID, m.ID, licentia.RoleViewer)
		}); err != nil {
			t.Fatal(err)
		}
		a := e.browser().do(t, http.MethodPost, "/v1/admin/invitations", `{"email":"x@acme.example","role":"viewer"}`,
			map[string]string{"Authorization": "Bearer " + tok.AccessToken, "Content-Type": "application/json"})
		if a.status != http.StatusForbidden {
			t.Errorf("invite as a viewer's assistant: %d, want 403\n%s", a.status, a.body)
		}
	})
}

// TestDeny: a member who denies sends the client access_denied with its
// state and the issuer, and no grant is made.
func TestDeny(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		m := e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
		c := e.register(t, "Claude Desktop")
		_, to := e.consent(t, "ada@acme.example", e.authorizeURL(c, "s-1"), "deny")
		want := url.Values{"error": {"access_denied"}, "error_description": {"The member did not allow access."},
			"state": {"s-1"}, "iss": {e.base}}
		if diff := cmp.Diff(want, to.Query()); diff != "" || !strings.HasPrefix(to.String(), redirectURI+"?") {
			t.Errorf("deny redirected to %s (-want +got query):\n%s", to, diff)
		}
		if gs, err := e.store.Grants(t.Context(), e.org.ID, m.ID); len(gs) != 0 || err != nil {
			t.Errorf("Grants() after deny = %+v, %v, want none", gs, err)
		}
	})
}

// TestCodeSingleUse: a code is exchanged once; presented again it is
// refused, and the grant it made ends, so the tokens of the first exchange
// stop working at once.
func TestCodeSingleUse(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
		c := e.register(t, "Claude Desktop")
		_, to := e.consent(t, "ada@acme.example", e.authorizeURL(c, "s"), "allow")
		code := to.Query().Get("code")
		tok, err := c.conf.Exchange(e.ctx(t), code, oauth2.VerifierOption(c.verifier))
		if err != nil {
			t.Fatalf("first Exchange() error = %v", err)
		}
		_, err = c.conf.Exchange(e.ctx(t), code, oauth2.VerifierOption(c.verifier))
		if retrieveError(err) != "invalid_grant" {
			t.Fatalf("second Exchange() error = %v, want invalid_grant", err)
		}
		if a := e.api(t, tok.AccessToken); a.status != http.StatusUnauthorized {
			t.Errorf("the first exchange's access token after the code's reuse: %d, want 401", a.status)
		}
		if _, err := e.refresh(t, c, tok.RefreshToken); retrieveError(err) != "invalid_grant" {
			t.Errorf("the first exchange's refresh token after the code's reuse: %v, want invalid_grant", err)
		}
		entries := audit(t, e, licentia.AuditGrantRevoked)
		if len(entries) != 1 || entries[0].Actor.Type != licentia.ActorSystem || !strings.Contains(string(entries[0].Data), "authorization_code_reused") {
			t.Errorf("grant.revoked entries = %+v, want one by the system for the code's reuse", entries)
		}
	})
}

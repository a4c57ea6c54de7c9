package oauth_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// codeFor runs the consent for c as email and returns the code.
func (e *env) codeFor(t *testing.T, c *client, email string) string {
	t.Helper()
	_, to := e.consent(t, email, e.authorizeURL(c, "s"), "allow")
	return to.Query().Get("code")
}

// TestCodeBindings: a code is refused to another client, with another
// redirect URI, another verifier or resource, or once expired; each
// refusal leaves it for its rightful exchange. Parameters given twice,
// missing ones and unknown grant types are refused; a client that is
// unknown or not named is answered 401 invalid_client.
func TestCodeBindings(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
		c, other := e.register(t, "Claude Desktop"), e.register(t, "Cursor")
		code := e.codeFor(t, c, "ada@acme.example")
		// One character changed, whatever the code's last one was.
		unknown := code[:len(code)-1] + "x"
		if unknown == code {
			unknown = code[:len(code)-1] + "y"
		}
		good := func() url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
				"client_id": {c.id}, "code_verifier": {c.verifier}}
		}
		for _, tt := range []struct {
			name   string
			edit   func(f url.Values)
			status int
			code   string
		}{
			{"another client", func(f url.Values) { f.Set("client_id", other.id) }, 400, "invalid_grant"},
			{"another redirect URI", func(f url.Values) { f.Set("redirect_uri", "http://127.0.0.1:33418/other") }, 400, "invalid_grant"},
			{"another verifier", func(f url.Values) { f.Set("code_verifier", oauth2.GenerateVerifier()) }, 400, "invalid_grant"},
			{"the challenge as verifier", func(f url.Values) { f.Set("code_verifier", oauth2.S256ChallengeFromVerifier(c.verifier)) }, 400, "invalid_grant"},
			{"a short verifier", func(f url.Values) { f.Set("code_verifier", c.verifier[:42]) }, 400, "invalid_grant"},
			{"another resource", func(f url.Values) { f.Set("resource", "https://other.example/mcp") }, 400, "invalid_target"},
			{"an unknown code", func(f url.Values) { f.Set("code", unknown) }, 400, "invalid_grant"},
			{"no verifier", func(f url.Values) { f.Del("code_verifier") }, 400, "invalid_request"},
			{"no redirect URI", func(f url.Values) { f.Del("redirect_uri") }, 400, "invalid_request"},
			{"no code", func(f url.Values) { f.Del("code") }, 400, "invalid_request"},
			{"two codes", func(f url.Values) { f.Add("code", code) }, 400, "invalid_request"},
			{"no grant type", func(f url.Values) { f.Del("grant_type") }, 400, "invalid_request"},
			{"password grant", func(f url.Values) { f.Set("grant_type", "password") }, 400, "unsupported_grant_type"},
			{"no client", func(f url.Values) { f.Del("client_id") }, 401, "invalid_client"},
			{"an unknown client", func(f url.Values) { f.Set("client_id", "NOTACLIENT") }, 401, "invalid_client"},
		} {
			f := good()
			tt.edit(f)
			wantOAuthError(t, tt.name, e.tokenRequest(t, f), tt.status, tt.code)
		}
		b := e.browser()
		a := b.do(t, http.MethodPost, "/oauth/token", good().Encode(), map[string]string{"Content-Type": "application/json"})
		wantOAuthError(t, "not a form", a, http.StatusBadRequest, "invalid_request")
		f := good()
		f.Del("client_id")
		basic := func(user, pass string) map[string]string {
			return map[string]string{"Content-Type": "application/x-www-form-urlencoded",
				"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
		}
		a = b.do(t, http.MethodPost, "/oauth/token", f.Encode(), basic(c.id, "a-secret"))
		wantOAuthError(t, "Basic with a secret", a, http.StatusUnauthorized, "invalid_client")
		if a.header.Get("WWW-Authenticate") == "" {
			t.Errorf("Basic with a secret: no WWW-Authenticate")
		}
		a = b.do(t, http.MethodPost, "/oauth/token", good().Encode(), basic(other.id, ""))
		wantOAuthError(t, "Basic naming another client", a, http.StatusBadRequest, "invalid_request")

		// The rightful exchange still works, here with the client named
		// by HTTP Basic and an empty password, as some clients send it.
		a = b.do(t, http.MethodPost, "/oauth/token", f.Encode(), basic(c.id, ""))
		if a.status != http.StatusOK {
			t.Fatalf("the rightful exchange after refusals: %d\n%s", a.status, a.body)
		}

		// A code not exchanged within 10 minutes expires.
		late := e.codeFor(t, c, "ada@acme.example")
		e.clock.Advance(10 * time.Minute)
		_, err := c.conf.Exchange(e.ctx(t), late, oauth2.VerifierOption(c.verifier))
		if retrieveError(err) != "invalid_grant" {
			t.Errorf("Exchange() of a 10-minute-old code error = %v, want invalid_grant", err)
		}
	})
}

// TestRefreshRotation: each refresh gives a new access and refresh token
// of the same grant and uses up the old refresh token. A used refresh
// token presented again ends the whole grant: the newest tokens stop
// working at once too.
func TestRefreshRotation(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		m := e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
		c := e.register(t, "Claude Desktop")
		first := e.authorize(t, c, "ada@acme.example")
		e.clock.Advance(time.Minute)
		second, err := e.refresh(t, c, first.RefreshToken)
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if second.RefreshToken == first.RefreshToken || second.AccessToken == first.AccessToken ||
			!strings.HasPrefix(second.RefreshToken, "licentia_ort_") {
			t.Fatalf("refresh gave %+v, want new tokens", second)
		}
		for name, tok := range map[string]string{"first": first.AccessToken, "second": second.AccessToken} {
			if a := e.api(t, tok); a.status != http.StatusOK {
				t.Errorf("the %s access token: %d, want 200", name, a.status)
			}
		}
		gs, _ := e.store.Grants(t.Context(), e.org.ID, m.ID)
		if len(gs) != 1 {
			t.Fatalf("Grants() after a refresh = %+v, want the one grant", gs)
		}
		// Another client cannot use the refresh token, and trying ends
		// nothing.
		thief := e.register(t, "Thief")
		if _, err := e.refresh(t, thief, second.RefreshToken); retrieveError(err) != "invalid_grant" {
			t.Errorf("another client's refresh: %v, want invalid_grant", err)
		}

		_, err = e.refresh(t, c, first.RefreshToken)
		if retrieveError(err) != "invalid_grant" {
			t.Fatalf("reusing the first refresh token: %v, want invalid_grant", err)
		}
		if a := e.api(t, second.AccessToken); a.status != http.StatusUnauthorized {
			t.Errorf("the newest access token after reuse: %d, want 401", a.status)
		}
		if _, err := e.refresh(t, c, second.RefreshToken); retrieveError(err) != "invalid_grant" {
			t.Errorf("the newest refresh token after reuse: %v, want invalid_grant", err)
		}
		if gs, _ := e.store.Grants(t.Context(), e.org.ID, m.ID); len(gs) != 0 {
			t.Errorf("Grants() after reuse = %+v, want none", gs)
		}
		entries := audit(t, e, licentia.AuditGrantRevoked)
		if len(entries) != 1 || entries[0].Actor.Type != licentia.ActorSystem || !strings.Contains(string(entries[0].Data), `"refresh_token_reused"`) {
			t.Errorf("grant.revoked entries = %+v, want one by the system for the reuse", entries)
		}
		if !strings.Contains(e.logs.String(), "oauth grant ended") {
			t.Errorf("the reuse is not in the log")
		}
	})
}

// TestRefreshRefused: an access token is no refresh token; a refresh
// token is refused after 30 days, and once its member was removed.
func TestRefreshRefused(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		owner := e.member(t, e.org.ID, "owner@acme.example", licentia.RoleOwner)
		m := e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
		c := e.register(t, "Claude Desktop")
		tok := e.authorize(t, c, "ada@acme.example")
		if _, err := e.refresh(t, c, tok.AccessToken); retrieveError(err) != "invalid_grant" {
			t.Errorf("an access token as refresh token: %v, want invalid_grant", err)
		}
		old := e.authorize(t, c, "ada@acme.example")
		e.clock.Advance(30 * 24 * time.Hour)
		if _, err := e.refresh(t, c, old.RefreshToken); retrieveError(err) != "invalid_grant" {
			t.Errorf("a 30-day-old refresh token: %v, want invalid_grant", err)
		}

		fresh := e.authorize(t, c, "ada@acme.example")
		if err := e.admin.RemoveMember(t.Context(), admin.Acting{OrgID: e.org.ID, MemberID: owner.ID}, m.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.refresh(t, c, fresh.RefreshToken); retrieveError(err) != "invalid_grant" {
			t.Errorf("a removed member's refresh token: %v, want invalid_grant", err)
		}
		if a := e.api(t, fresh.AccessToken); a.status != http.StatusUnauthorized {
			t.Errorf("a removed member's access token: %d, want 401", a.status)
		}
	})
}

// TestRemovedBeforeExchange: a member removed between consent and the
// exchange gets no tokens.
func TestRemovedBeforeExchange(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		owner := e.member(t, e.org.ID, "owner@acme.example", licentia.RoleOwner)
		m := e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
		c := e.register(t, "Claude Desktop")
		code := e.codeFor(t, c, "ada@acme.example")
		if err := e.admin.RemoveMember(t.Context(), admin.Acting{OrgID: e.org.ID, MemberID: owner.ID}, m.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := c.conf.Exchange(e.ctx(t), code, oauth2.VerifierOption(c.verifier)); retrieveError(err) != "invalid_grant" {
			t.Errorf("Exchange() after removal error = %v, want invalid_grant", err)
		}
	})
}

// TestRevoke: revoking an access or a refresh token ends its grant (RFC
// 7009); an unknown token, and another client's, are answered 200 and
// change nothing.
func TestRevoke(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		m := e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
		c, other := e.register(t, "Claude Desktop"), e.register(t, "Cursor")
		revoke := func(f url.Values) answer { return e.browser().post(t, "/oauth/revoke", f) }

		byAccess := e.authorize(t, c, "ada@acme.example")
		byRefresh := e.authorize(t, c, "ada@acme.example")
		kept := e.authorize(t, c, "ada@acme.example")
		for name, f := range map[string]url.Values{
			"unknown":          {"token": {"licentia_oat_unknown"}, "client_id": {c.id}},
			"another client's": {"token": {kept.AccessToken}, "client_id": {other.id}, "token_type_hint": {"access_token"}},
		} {
			if a := revoke(f); a.status != http.StatusOK || a.body != "" {
				t.Errorf("revoke %s: %d %q, want 200 and no body", name, a.status, a.body)
			}
		}
		wantOAuthError(t, "no token", revoke(url.Values{"client_id": {c.id}}), http.StatusBadRequest, "invalid_request")

		if a := revoke(url.Values{"token": {byAccess.AccessToken}, "client_id": {c.id}, "token_type_hint": {"access_token"}}); a.status != http.StatusOK {
			t.Fatalf("revoke an access token: %d\n%s", a.status, a.body)
		}
		if a := revoke(url.Values{"token": {byRefresh.RefreshToken}, "client_id": {c.id}, "token_type_hint": {"refresh_token"}}); a.status != http.StatusOK {
			t.Fatalf("revoke a refresh token: %d\n%s", a.status, a.body)
		}
		for name, tok := range map[string]*oauth2.Token{"by access": byAccess, "by refresh": byRefresh} {
			if a := e.api(t, tok.AccessToken); a.status != http.StatusUnauthorized {
				t.Errorf("access token of the grant revoked %s: %d, want 401", name, a.status)
			}
			if _, err := e.refresh(t, c, tok.RefreshToken); retrieveError(err) != "invalid_grant" {
				t.Errorf("refresh token of the grant revoked %s: %v, want invalid_grant", name, err)
			}
		}
		if a := e.api(t, kept.AccessToken); a.status != http.StatusOK {
			t.Errorf("the grant another client tried to revoke: %d, want 200", a.status)
		}
		if gs, _ := e.store.Grants(t.Context(), e.org.ID, m.ID); len(gs) != 1 {
			t.Errorf("Grants() = %+v, want the one kept", gs)
		}
		entries := audit(t, e, licentia.AuditGrantRevoked)
		if len(entries) != 2 || entries[0].Actor.Type != licentia.ActorMember || *entries[0].Actor.ID != m.ID {
			t.Errorf("grant.revoked entries = %+v, want two by the member", entries)
		}
		// Revoking again is no error.
		if a := revoke(url.Values{"token": {byAccess.AccessToken}}); a.status != http.StatusOK {
			t.Errorf("revoke again: %d", a.status)
		}
	})
}

// TestCodeRace: of clients exchanging one code at once, exactly one gets
// tokens, and since the others presented a used code the grant ends: the
// winner's token is refused too.
func TestCodeRace(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		const racers = 6
		e.member(t, e.org.ID, "ada@acme.example", licentia.RoleAdmin)
		c := e.register(t, "Claude Desktop")
		code := e.codeFor(t, c, "ada@acme.example")
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
			"client_id": {c.id}, "code_verifier": {c.verifier}}
		answers := make([]answer, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() { answers[i] = e.tokenRequest(t, form) })
		}
		wg.Wait()
		var won []string
		for _, a := range answers {
			switch {
			case a.status == http.StatusOK:
				won = append(won, a.json(t)["access_token"].(string))
			case a.status != http.StatusBadRequest || !strings.Contains(a.body, "invalid_grant"):
				t.Errorf("a racer got %d %s, want 200 or invalid_grant", a.status, a.body)
			}
		}
		if len(won) != 1 {
			t.Fatalf("%d racers got tokens, want one", len(won))
		}
		for _, tok := range won {
			if a := e.api(t, tok); a.status != http.StatusUnauthorized {
				t.Errorf("the winner's token after the others presented the code: %d, want 401", a.status)
			}
		}
	})
}

package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/licentia/licentia/internal/licentia"
)

// TestLogsHoldNoSecrets: a run through registration, consent, exchange,
// refresh, reuse and revocation writes no token, code, verifier, state,
// password or email address to the log, while the log does record the
// requests.
func TestLogsHoldNoSecrets(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		e.member(t, e.org.ID, "ada.lovelace@acme.example", licentia.RoleAdmin)
		c := e.register(t, "Claude Desktop")
		path := e.authorizeURL(c, "state-secret-77")
		_, to := e.consent(t, "ada.lovelace@acme.example", path, "allow")
		code := to.Query().Get("code")
		secrets := []string{password, "ada.lovelace@acme.example", "state-secret-77", code, c.verifier,
			oauth2.S256ChallengeFromVerifier(c.verifier)}

		bad := e.tokenRequest(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
			"client_id": {c.id}, "code_verifier": {"wrong-verifier-" + strings.Repeat("x", 40)}})
		wantOAuthError(t, "wrong verifier", bad, http.StatusBadRequest, "invalid_grant")
		tok, err := c.conf.Exchange(e.ctx(t), code, oauth2.VerifierOption(c.verifier))
		if err != nil {
			t.Fatal(err)
		}
		next, err := e.refresh(t, c, tok.RefreshToken)
		if err != nil {
			t.Fatal(err)
		}
		e.api(t, next.AccessToken)
		if _, err := e.refresh(t, c, tok.RefreshToken); retrieveError(err) != "invalid_grant" {
			t.Fatalf("reuse: %v", err)
		}
		again := e.authorize(t, c, "ada.lovelace@acme.example")
		e.browser().post(t, "/oauth/revoke", url.Values{"token": {again.AccessToken}, "client_id": {c.id}})
		e.api(t, again.AccessToken)
		secrets = append(secrets, tok.AccessToken, tok.RefreshToken, next.AccessToken, next.RefreshToken, again.AccessToken,
			again.RefreshToken, "wrong-verifier-")

		logs := e.logs.String()
		for _, want := range []string{`"msg":"oauth request"`, `"msg":"console request"`, `"msg":"oauth token refused"`,
			`"msg":"oauth client registered"`, `"pattern":"POST /oauth/token"`} {
			if !strings.Contains(logs, want) {
				t.Errorf("the log lacks %s", want)
			}
		}
		for _, s := range secrets {
			if strings.Contains(logs, s) {
				t.Errorf("the log holds %q", s)
			}
		}
		if strings.Contains(logs, "@") {
			t.Errorf("the log holds an address:\n%s", logs)
		}
	})
}

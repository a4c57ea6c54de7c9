package oauth_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestRegister: a public client registers with https and loopback http
// redirect URIs and is stored as answered; metadata it does not use is
// ignored.
func TestRegister(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		uris := []any{"https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:33418/callback", "http://[::1]:9/cb",
			"http://localhost/cb?x=1", "https://claude.ai/api/mcp/auth_callback"}
		a := e.browser().postJSON(t, "/oauth/register", map[string]any{
			"client_name": "  Claude Desktop ", "redirect_uris": uris, "logo_uri": "https://claude.ai/logo.png",
			"software_id": "claude", "scope": "mcp", "unknown_field": 1,
		})
		if a.status != http.StatusCreated || a.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("register: %d\n%s", a.status, a.body)
		}
		got := a.json(t)
		id, _ := got["client_id"].(string)
		want := map[string]any{
			"client_id": id, "client_id_issued_at": float64(start.Unix()), "client_name": "Claude Desktop",
			"redirect_uris":  uris[:4],
			"grant_types":    []any{"authorization_code", "refresh_token"},
			"response_types": []any{"code"}, "token_endpoint_auth_method": "none",
		}
		if diff := cmp.Diff(want, got); diff != "" || len(id) < 20 {
			t.Errorf("register answer mismatch (-want +got):\n%s", diff)
		}
		c, err := e.store.OAuthClient(t.Context(), id)
		wantClient := &licentia.OAuthClient{ID: id, Name: "Claude Desktop", CreatedAt: start,
			RedirectURIs: []string{uris[0].(string), uris[1].(string), uris[2].(string), uris[3].(string)}}
		if diff := cmp.Diff(wantClient, c); diff != "" || err != nil {
			t.Errorf("OAuthClient() mismatch (-want +got), error %v:\n%s", err, diff)
		}
		other := e.register(t, "Cursor")
		if other.id == id {
			t.Errorf("two registrations got the same client_id %s", id)
		}
	})
}

// TestRegisterRefused: redirect URIs other than https or loopback http,
// with a fragment or a user name, relative, too many or too long, and
// metadata of a confidential client are refused in RFC 7591 form.
func TestRegisterRefused(t *testing.T) {
	e := newEnv(t, storetest.OpenSQLite)
	many := make([]string, 11)
	for i := range many {
		many[i] = fmt.Sprintf("https://app.example/cb%d", i)
	}
	for _, tt := range []struct {
		name string
		body any
		code string
	}{
		{"http not loopback", map[string]any{"redirect_uris": []string{"http://app.example/cb"}}, "invalid_redirect_uri"},
		{"http on a name ending like loopback", map[string]any{"redirect_uris": []string{"http://localhost.evil.example/cb"}}, "invalid_redirect_uri"},
		{"http on a private address", map[string]any{"redirect_uris": []string{"http://192.168.1.2:80/cb"}}, "invalid_redirect_uri"},
		{"fragment", map[string]any{"redirect_uris": []string{"https://app.example/cb#frag"}}, "invalid_redirect_uri"},
		{"empty fragment", map[string]any{"redirect_uris": []string{"https://app.example/cb#"}}, "invalid_redirect_uri"},
		{"relative", map[string]any{"redirect_uris": []string{"/callback"}}, "invalid_redirect_uri"},
		{"no host", map[string]any{"redirect_uris": []string{"https:///cb"}}, "invalid_redirect_uri"},
		{"opaque", map[string]any{"redirect_uris": []string{"https:app.example"}}, "invalid_redirect_uri"},
		{"custom scheme", map[string]any{"redirect_uris": []string{"cursor://anysphere.cursor-retrieval/oauth/callback"}}, "invalid_redirect_uri"},
		{"javascript", map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, "invalid_redirect_uri"},
		{"user name", map[string]any{"redirect_uris": []string{"https://user@app.example/cb"}}, "invalid_redirect_uri"},
		{"space", map[string]any{"redirect_uris": []string{"https://app.example/c b"}}, "invalid_redirect_uri"},
		{"backslash", map[string]any{"redirect_uris": []string{`https://app.example\@evil.example/cb`}}, "invalid_redirect_uri"},
		{"host with a semicolon", map[string]any{"redirect_uris": []string{"https://app.example;script-src/cb"}}, "invalid_redirect_uri"},
		{"too long", map[string]any{"redirect_uris": []string{"https://app.example/" + strings.Repeat("a", 2000)}}, "invalid_redirect_uri"},
		{"too many", map[string]any{"redirect_uris": many}, "invalid_redirect_uri"},
		{"none", map[string]any{"client_name": "x"}, "invalid_redirect_uri"},
		{"empty list", map[string]any{"redirect_uris": []string{}}, "invalid_redirect_uri"},
		{"one bad among good", map[string]any{"redirect_uris": []string{redirectURI, "http://app.example/cb"}}, "invalid_redirect_uri"},
		{"client secret", map[string]any{"redirect_uris": []string{redirectURI}, "token_endpoint_auth_method": "client_secret_basic"}, "invalid_client_metadata"},
		{"implicit grant", map[string]any{"redirect_uris": []string{redirectURI}, "grant_types": []string{"implicit"}}, "invalid_client_metadata"},
		{"token response", map[string]any{"redirect_uris": []string{redirectURI}, "response_types": []string{"token"}}, "invalid_client_metadata"},
		{"long name", map[string]any{"redirect_uris": []string{redirectURI}, "client_name": strings.Repeat("n", 201)}, "invalid_client_metadata"},
		{"name with a newline", map[string]any{"redirect_uris": []string{redirectURI}, "client_name": "Claude\nDesktop"}, "invalid_client_metadata"},
		{"not an object", []string{redirectURI}, "invalid_client_metadata"},
		{"redirect_uris a string", map[string]any{"redirect_uris": redirectURI}, "invalid_client_metadata"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Each case in a window of the registration limit of its own.
			e.clock.Advance(time.Hour)
			wantOAuthError(t, tt.name, e.browser().postJSON(t, "/oauth/register", tt.body), http.StatusBadRequest, tt.code)
		})
	}
	e.clock.Advance(time.Hour)
	b := e.browser()
	a := b.do(t, http.MethodPost, "/oauth/register", `{"redirect_uris":["`+redirectURI+`"]}`, map[string]string{"Content-Type": "text/plain"})
	wantOAuthError(t, "not JSON", a, http.StatusBadRequest, "invalid_client_metadata")
	a = b.do(t, http.MethodPost, "/oauth/register", `{"redirect_uris":["`+redirectURI+`"]} {}`, map[string]string{"Content-Type": "application/json"})
	wantOAuthError(t, "trailing data", a, http.StatusBadRequest, "invalid_client_metadata")
	huge := `{"redirect_uris":["` + redirectURI + `"],"client_uri":"` + strings.Repeat("x", 17<<10) + `"}`
	a = b.do(t, http.MethodPost, "/oauth/register", huge, map[string]string{"Content-Type": "application/json"})
	wantOAuthError(t, "oversized", a, http.StatusRequestEntityTooLarge, "invalid_client_metadata")
}

// TestRegisterLimit: a client address registers at most 20 clients an
// hour; refused attempts count too. The 21st is answered 429 with
// Retry-After, and the next hour registers again.
func TestRegisterLimit(t *testing.T) {
	e := newEnv(t, storetest.OpenSQLite)
	for i := range 19 {
		e.register(t, fmt.Sprintf("client %d", i))
	}
	wantOAuthError(t, "20th, refused", e.browser().postJSON(t, "/oauth/register", map[string]any{}), http.StatusBadRequest, "invalid_redirect_uri")
	a := e.browser().postJSON(t, "/oauth/register", map[string]any{"redirect_uris": []string{redirectURI}})
	wantOAuthError(t, "21st", a, http.StatusTooManyRequests, "temporarily_unavailable")
	if a.header.Get("Retry-After") != "3600" {
		t.Errorf("Retry-After = %q, want 3600", a.header.Get("Retry-After"))
	}
	e.clock.Advance(time.Hour)
	e.register(t, "next hour")
}

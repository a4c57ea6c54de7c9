package oauth_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/store/storetest"
)

// TestMetadata: the authorization server's document (RFC 8414) and the MCP
// server's (RFC 9728, at both addresses a client may try) name this
// service's own address; any origin may read them, and none is stored.
func TestMetadata(t *testing.T) {
	e := newEnv(t, storetest.OpenSQLite)
	b := e.browser()
	for _, tt := range []struct {
		path string
		want map[string]any
	}{
		{"/.well-known/oauth-authorization-server", map[string]any{
			"issuer":                                         e.base,
			"authorization_endpoint":                         e.base + "/oauth/authorize",
			"token_endpoint":                                 e.base + "/oauth/token",
			"registration_endpoint":                          e.base + "/oauth/register",
			"revocation_endpoint":                            e.base + "/oauth/revoke",
			"response_types_supported":                       []any{"code"},
			"grant_types_supported":                          []any{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported":               []any{"S256"},
			"token_endpoint_auth_methods_supported":          []any{"none"},
			"revocation_endpoint_auth_methods_supported":     []any{"none"},
			"authorization_response_iss_parameter_supported": true,
		}},
		{"/.well-known/oauth-protected-resource", map[string]any{
			"resource": e.base + "/mcp", "authorization_servers": []any{e.base}, "bearer_methods_supported": []any{"header"},
			"resource_name": "Licentia",
		}},
		{"/.well-known/oauth-protected-resource/mcp", map[string]any{
			"resource": e.base + "/mcp", "authorization_servers": []any{e.base}, "bearer_methods_supported": []any{"header"},
			"resource_name": "Licentia",
		}},
	} {
		a := b.get(t, tt.path)
		if a.status != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", tt.path, a.status, a.body)
		}
		if diff := cmp.Diff(tt.want, a.json(t)); diff != "" {
			t.Errorf("GET %s mismatch (-want +got):\n%s", tt.path, diff)
		}
		for k, v := range map[string]string{"Access-Control-Allow-Origin": "*", "Cache-Control": "no-store", "Content-Type": "application/json"} {
			if got := a.header.Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", tt.path, k, got, v)
			}
		}
	}

	// A browser-based client's preflight is answered; other methods and
	// paths are refused in RFC 6749 form.
	a := b.do(t, http.MethodOptions, "/oauth/register", "", map[string]string{
		"Origin": "https://inspector.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
	if a.status != http.StatusNoContent || a.header.Get("Access-Control-Allow-Origin") != "*" ||
		a.header.Get("Access-Control-Allow-Headers") == "" {
		t.Errorf("preflight: %d %v, want 204 allowing any origin", a.status, a.header)
	}
	a = b.get(t, "/oauth/token")
	wantOAuthError(t, "GET /oauth/token", a, http.StatusMethodNotAllowed, "invalid_request")
	if a.header.Get("Allow") != "POST" {
		t.Errorf("GET /oauth/token: Allow = %q, want POST", a.header.Get("Allow"))
	}
	wantOAuthError(t, "GET /oauth/nothing", b.get(t, "/oauth/nothing"), http.StatusNotFound, "invalid_request")
	a = b.do(t, http.MethodPost, "/.well-known/oauth-authorization-server", "", nil)
	wantOAuthError(t, "POST to the metadata", a, http.StatusMethodNotAllowed, "invalid_request")
	if a.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST to the metadata: Allow = %q, want GET, HEAD", a.header.Get("Allow"))
	}
}

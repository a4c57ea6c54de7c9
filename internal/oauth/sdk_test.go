package oauth_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/licentia/licentia/internal/licentia"
)

// TestMCPSDKClient drives the server with the official MCP SDK's own
// client, as an assistant meets it: a 401 from the MCP server names the
// resource metadata; the SDK discovers the authorization server, registers
// dynamically, sends the member through sign-in and consent (the console's
// forms, played here by the browser), checks iss and exchanges the code.
// The token it gets acts as the member.
func TestMCPSDKClient(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		m := e.member(t, e.org.ID, "ada@acme.example", licentia.RoleDeveloper)
		h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
			DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName: "MCP SDK client", RedirectURIs: []string{redirectURI},
				GrantTypes: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethod: "none",
			}},
			RedirectURL: redirectURI,
			AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
				_, to := e.consent(t, "ada@acme.example", strings.TrimPrefix(args.URL, e.base), "allow")
				q := to.Query()
				return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
			},
			Client: e.srv.Client(),
		})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.base+"/mcp", nil)
		unauthorized := &http.Response{StatusCode: http.StatusUnauthorized, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{
			"Www-Authenticate": {`Bearer resource_metadata="` + e.base + `/.well-known/oauth-protected-resource"`}}}
		if err := h.Authorize(t.Context(), req, unauthorized); err != nil {
			t.Fatalf("Authorize() error = %v", err)
		}
		ts, err := h.TokenSource(t.Context())
		if err != nil || ts == nil {
			t.Fatalf("TokenSource() = %v, %v", ts, err)
		}
		tok, err := ts.Token()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.api(t, tok.AccessToken); a.status != http.StatusOK {
			t.Errorf("the SDK client's access token: %d\n%s", a.status, a.body)
		}
		gs, _ := e.store.Grants(t.Context(), e.org.ID, m.ID)
		if len(gs) != 1 || gs[0].ClientName != "MCP SDK client" {
			t.Errorf("Grants() = %+v, want one to the SDK's client", gs)
		}
	})
}

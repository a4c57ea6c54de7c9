package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	licauth "github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/cli"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
)

// assistantRedirect is where the SDK's client says it listens for the
// code, as a desktop assistant does on loopback; the flow never follows it.
const assistantRedirect = "http://127.0.0.1:4321/callback"

// served is a serve process in this test, at base.
type served struct {
	base string
	h    *harness
	logs *lockedBuffer
}

// serveAt starts serve on a fresh database (dbURL, or SQLite in the
// harness's directory) at an address that is also its base URL, as the
// OAuth issuer must be.
func serveAt(t *testing.T, dbURL string) *served {
	t.Helper()
	h := newHarness(t)
	if dbURL != "" {
		h.vars["LICENTIA_DATABASE_URL"] = dbURL
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	h.vars["LICENTIA_LISTEN"] = addr
	h.vars["LICENTIA_BASE_URL"] = "http://" + addr
	logs := &lockedBuffer{}
	app, err := cli.NewApp(t.Context(), h.env(io.Discard, logs))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return &served{base: "http://" + addr, h: h, logs: logs}
}

// person is someone using the console in a browser: a cookie jar that
// follows the console's own redirects, never one to the assistant.
func (s *served) person(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host != strings.TrimPrefix(s.base, "http://") {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

func post(t *testing.T, c *http.Client, to string, form url.Values) (*http.Response, string) {
	t.Helper()
	res, err := c.PostForm(to, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// signInAndAllow plays the member at the authorization URL: the console
// asks them to sign in, shows the consent page, and they allow (or deny).
// It returns the redirect to the assistant.
func (s *served) signInAndAllow(t *testing.T, authorizeURL, email, password, decision string) *url.URL {
	t.Helper()
	c := s.person(t)
	res, err := c.Get(authorizeURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !strings.HasPrefix(res.Request.URL.Path, "/console/sign-in") {
		t.Fatalf("authorize before sign-in ended at %s, want the sign-in page", res.Request.URL)
	}
	res, page := post(t, c, s.base+"/console/sign-in", url.Values{"email": {email}, "password": {password},
		"next": {res.Request.URL.Query().Get("next")}})
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `name="decision"`) {
		t.Fatalf("after sign-in: %d at %s, want the consent page:\n%s", res.StatusCode, res.Request.URL, page)
	}
	form := url.Values{"decision": {decision}}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		form.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	res, body := post(t, c, s.base+"/oauth/authorize", form)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("consent: %d, want 303:\n%s", res.StatusCode, body)
	}
	to, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// assistant is an MCP client that signs in through OAuth with the SDK's
// own authorization-code handler, as email.
type assistant struct {
	session *mcp.ClientSession
	handler *auth.AuthorizationCodeHandler
}

func (s *served) assistant(t *testing.T, email, password string) *assistant {
	t.Helper()
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Test assistant", RedirectURIs: []string{assistantRedirect},
			GrantTypes: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethod: "none",
		}},
		RedirectURL: assistantRedirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			q := s.signInAndAllow(t, args.URL, email, password, "allow").Query()
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-assistant", Version: "1"}, nil)
	session, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.base + "/mcp", OAuthHandler: h, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect as %s: %v", email, err)
	}
	t.Cleanup(func() { session.Close() })
	return &assistant{session: session, handler: h}
}

func (a *assistant) tools(t *testing.T) []string {
	t.Helper()
	res, err := a.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// call calls a tool and returns its structured content, and the API error
// code when the tool refused.
func (a *assistant) call(t *testing.T, name string, args map[string]any) (map[string]any, string) {
	t.Helper()
	res, err := a.session.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	json.Unmarshal(raw, &out)
	if res.IsError {
		e, _ := out["error"].(map[string]any)
		code, _ := e["code"].(string)
		return out, code
	}
	return out, ""
}

func (a *assistant) token(t *testing.T) *oauth2.Token {
	t.Helper()
	ts, err := a.handler.TokenSource(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// mcpStatus is the status of a bare MCP request with an access token.
func (s *served) mcpStatus(t *testing.T, token string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// join accepts the invitation mailed to email with password.
func (s *served) join(t *testing.T, email, password string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.h.dir, "outbox", "*.eml"))
	link := regexp.MustCompile(regexp.QuoteMeta(s.base) + `/console/join/[0-9A-Za-z]{43}`)
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		text := strings.ReplaceAll(string(raw), "=\r\n", "")
		if l := link.FindString(text); l != "" && strings.Contains(text, email) {
			if res, body := post(t, s.person(t), l, url.Values{"password": {password}}); res.StatusCode != http.StatusOK {
				t.Fatalf("join as %s: %d\n%s", email, res.StatusCode, body)
			}
			return
		}
	}
	t.Fatalf("no invitation to %s in the outbox", email)
}

// TestAssistantsEndToEnd: AI assistants through the official MCP SDK's
// client against serve, on SQLite and PostgreSQL: dynamic registration,
// PKCE, sign-in and consent through the console's forms; the owner's
// assistant invites an admin and a viewer by mail; tool calls as the viewer
// and as the admin, with their roles; refresh rotation, and reuse of a
// rotated refresh token ending the grant; revocation; a removed member's
// token refused at once.
func TestAssistantsEndToEnd(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { assistantsEndToEnd(t, "") })
	t.Run("postgres", func(t *testing.T) { assistantsEndToEnd(t, storetest.PostgresURL(t)) })
}

func assistantsEndToEnd(t *testing.T, dbURL string) {
	s := serveAt(t, dbURL)
	org := s.h.ok(t, "org", "create", "--name", "Acme", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	if res, body := post(t, s.person(t), org["setup_url"].(string), url.Values{"password": {"owner's passphrase"}}); res.StatusCode != http.StatusOK {
		t.Fatalf("setup link: %d\n%s", res.StatusCode, body)
	}
	// A product, made with a key: no assistant writes products.
	key := s.h.ok(t, "apikey", "create", "--org", "acme", "--scopes", "products:write")["key"].(string)
	req, _ := http.NewRequest("POST", s.base+"/v1/admin/products", strings.NewReader(`{"id":"desk-app","name":"Desk","key_prefix":"DESK","current_major":1}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create product: %v %v", res, err)
	}

	owner := s.assistant(t, "owner@acme.example", "owner's passphrase")
	if got := owner.tools(t); !slices.Contains(got, "invite_member") || slices.Contains(got, "anonymise_licence") {
		t.Errorf("the owner's tools: %v", got)
	}
	for email, role := range map[string]string{"ann@acme.example": "admin", "vic@acme.example": "viewer"} {
		if out, code := owner.call(t, "invite_member", map[string]any{"email": email, "role": role}); code != "" {
			t.Fatalf("invite %s: %s %v", email, code, out)
		}
	}
	s.join(t, "ann@acme.example", "ann's passphrase")
	s.join(t, "vic@acme.example", "vic's passphrase")

	admin := s.assistant(t, "ann@acme.example", "ann's passphrase")
	viewer := s.assistant(t, "vic@acme.example", "vic's passphrase")
	if got := viewer.tools(t); slices.Contains(got, "issue_licence") || slices.Contains(got, "invite_member") || !slices.Contains(got, "find_licences") {
		t.Errorf("the viewer's tools: %v", got)
	}
	issued, code := admin.call(t, "issue_licence", map[string]any{"product_id": "desk-app", "email": "buyer@example.com"})
	if code != "" {
		t.Fatalf("the admin's issue_licence: %s %v", code, issued)
	}
	licenceID := issued["licence"].(map[string]any)["id"].(string)
	if found, code := viewer.call(t, "find_licences", map[string]any{"email": "buyer@example.com"}); code != "" || len(found["licences"].([]any)) != 1 {
		t.Errorf("the viewer's find_licences: %s %v", code, found)
	}
	if _, code := viewer.call(t, "revoke_licence", map[string]any{"id": licenceID, "reason": "test"}); code != "insufficient_scope" {
		t.Errorf("the viewer's revoke_licence: %q, want insufficient_scope", code)
	}
	if _, code := admin.call(t, "revoke_licence", map[string]any{"id": licenceID, "reason": "chargeback"}); code != "" {
		t.Errorf("the admin's revoke_licence: %q", code)
	}

	// Refresh rotation: the new pair works; the rotated refresh token
	// used again ends the whole grant, the new access token with it.
	tok := admin.token(t)
	client := clientID(t, s, admin)
	refresh := func(rt string) (*oauth2.Token, error) {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {client}}
		res, body := post(t, http.DefaultClient, s.base+"/oauth/token", form)
		if res.StatusCode != http.StatusOK {
			return nil, errors.New(body)
		}
		var out oauth2.Token
		return &out, json.Unmarshal([]byte(body), &out)
	}
	rotated, err := refresh(tok.RefreshToken)
	if err != nil || rotated.AccessToken == tok.AccessToken || rotated.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: %+v, %v", rotated, err)
	}
	if st := s.mcpStatus(t, rotated.AccessToken); st != http.StatusOK {
		t.Errorf("the rotated access token on /mcp: %d", st)
	}
	if _, err := refresh(tok.RefreshToken); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("reusing a rotated refresh token: %v, want invalid_grant", err)
	}
	if st := s.mcpStatus(t, rotated.AccessToken); st != http.StatusUnauthorized {
		t.Errorf("after reuse, the grant's access token on /mcp: %d, want 401", st)
	}

	// Revocation ends the owner's grant.
	ownerTok := owner.token(t)
	if res, body := post(t, http.DefaultClient, s.base+"/oauth/revoke", url.Values{"token": {ownerTok.RefreshToken}}); res.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d %s", res.StatusCode, body)
	}
	if st := s.mcpStatus(t, ownerTok.AccessToken); st != http.StatusUnauthorized {
		t.Errorf("after revocation, the owner's access token: %d, want 401", st)
	}

	// A removed member's token is refused at the next request.
	vicTok := viewer.token(t)
	owner2 := s.assistant(t, "owner@acme.example", "owner's passphrase")
	members, _ := owner2.call(t, "list_members", nil)
	var vicID string
	for _, m := range members["members"].([]any) {
		if m := m.(map[string]any); m["email"] == "vic@acme.example" {
			vicID = m["id"].(string)
		}
	}
	if _, code := owner2.call(t, "remove_member", map[string]any{"id": vicID}); code != "" {
		t.Fatalf("remove_member: %s", code)
	}
	if st := s.mcpStatus(t, vicTok.AccessToken); st != http.StatusUnauthorized {
		t.Errorf("a removed member's token: %d, want 401", st)
	}

	logs := s.logs.String()
	for _, secret := range []string{tok.AccessToken, tok.RefreshToken, rotated.AccessToken, rotated.RefreshToken, ownerTok.AccessToken,
		vicTok.AccessToken, key, "owner's passphrase", "ann@acme.example", "vic@acme.example", "buyer@example.com"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the serve log holds %.24q", secret)
		}
	}
	if !strings.Contains(logs, `"pattern":"/mcp"`) && !strings.Contains(logs, `/mcp`) {
		t.Errorf("the serve log has no access line of /mcp:\n%s", logs)
	}
}

// clientID is the client id the SDK registered for a, read from the
// grant of its refresh token.
func clientID(t *testing.T, s *served, a *assistant) string {
	t.Helper()
	var st store.Store
	var err error
	if path, ok := strings.CutPrefix(s.h.vars["LICENTIA_DATABASE_URL"], "sqlite:"); ok {
		st, err = sqlite.Open(t.Context(), path)
	} else {
		st, err = postgres.Open(t.Context(), s.h.vars["LICENTIA_DATABASE_URL"])
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tok, err := st.AssistantToken(t.Context(), licauth.TokenHash(a.token(t).RefreshToken))
	if err != nil || tok.Grant.ClientID == "" {
		t.Fatalf("the assistant's grant: %+v, %v", tok, err)
	}
	return tok.Grant.ClientID
}

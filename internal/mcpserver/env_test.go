package mcpserver_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/logtest"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/mcpserver"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
)

// baseURL is LICENTIA_BASE_URL in tests.
const baseURL = "https://licentia.example.org"

// metadataChallenge is the WWW-Authenticate of every 401 from /mcp.
const metadataChallenge = `Bearer resource_metadata="https://licentia.example.org/.well-known/oauth-protected-resource"`

// shopKey is the Stripe key the loopback fake accepts.
const shopKey = "sk_test_51McpShopKeyForTestsOnly"

// start is where every fake clock begins: on a whole minute, so the admin
// rate-limit window has 60 seconds left.
var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// env is the service in-process as serve assembles it: the API everywhere
// and the MCP server at /mcp, over a real store, a fake clock and the
// in-memory rate limiter, behind a real HTTP server.
type env struct {
	srv     *httptest.Server
	mcp     *mcpserver.Server
	store   store.Store
	admin   *admin.Service
	clock   *clock.Fake
	limiter ratelimit.Limiter
	logs    *logtest.Buffer
	// org is an organization on the business plan whose owner is
	// owner@acme.example.
	org *licentia.Organization
	// setup is a key with every scope a key may hold, for what an
	// assistant may not do (products) and for reading back.
	setup string
}

// engines are the stores the MCP server is held to: SQLite, and
// PostgreSQL when LICENTIA_TEST_POSTGRES_URL is set.
var engines = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"sqlite", storetest.OpenSQLite},
	{"postgres", storetest.OpenPostgres},
}

// onEngines runs test on every engine.
func onEngines(t *testing.T, test func(t *testing.T, e *env)) {
	for _, en := range engines {
		t.Run(en.name, func(t *testing.T) { test(t, newEnv(t, en.open)) })
	}
}

func newEnv(t *testing.T, open func(t *testing.T) store.Store) *env {
	t.Helper()
	if open == nil {
		open = storetest.OpenSQLite
	}
	st := open(t)
	clk := clock.NewFake(start)
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	master, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	keys := signing.NewKeyring(master)
	cat := signing.NewCatalogue(st, clk, log)
	if err := cat.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	shop := providertest.NewStripe(t, shopKey)
	shop.AccountID = "acct_1McpShop"
	shop.AddProduct("prod_basic")
	svc := admin.New(admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: keys, Catalogue: cat,
		BaseURL: baseURL, PublicURL: baseURL, Mail: mail.NewOutbox(filepath.Join(t.TempDir(), "outbox"), ""), Logger: log,
		Providers: map[providers.Name]providers.Provider{providers.Stripe: stripe.New(shop.URL(), 2*time.Second)}})
	limiter := ratelimit.NewMemory(clk)
	authn := auth.NewAuthenticator(st, clk)
	api := httpapi.New(httpapi.Options{
		Store: st, Admin: svc,
		Activation: activation.New(activation.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat, Validity: 24 * time.Hour, Logger: log}),
		Purchases:  purchase.New(purchase.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat}),
		Auth:       authn, Limiter: limiter, Clock: clk, Logger: log,
	})
	m, err := mcpserver.New(mcpserver.Options{API: api, Document: httpapi.OpenAPI, Auth: authn, Limiter: limiter, Clock: clk, Logger: log, BaseURL: baseURL})
	if err != nil {
		t.Fatalf("mcpserver.New() error = %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle(mcpserver.Path, m)
	e := &env{srv: httptest.NewServer(mux), mcp: m, store: st, admin: svc, clock: clk, limiter: limiter, logs: logs}
	t.Cleanup(e.srv.Close)
	e.org, err = svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Acme", Slug: "acme", Plan: licentia.PlanBusiness, OwnerEmail: "owner@acme.example"})
	if err != nil {
		t.Fatal(err)
	}
	e.setup = e.key(t, keyScopes()...)
	return e
}

// keyScopes are every scope a key may hold.
func keyScopes() []licentia.Scope {
	var out []licentia.Scope
	for _, s := range licentia.Scopes {
		if licentia.IsKeyScope(s) {
			out = append(out, s)
		}
	}
	return out
}

// key creates an API key of the env's organization holding scopes.
func (e *env) key(t *testing.T, scopes ...licentia.Scope) string {
	t.Helper()
	k, _ := e.keyRecord(t, scopes...)
	return k
}

// keyRecord creates an API key and returns it with its id.
func (e *env) keyRecord(t *testing.T, scopes ...licentia.Scope) (string, string) {
	t.Helper()
	k, rec, err := e.admin.CreateAPIKey(t.Context(), licentia.OperatorActor, e.org.ID, admin.NewAPIKey{Name: "test", Scopes: scopes})
	if err != nil {
		t.Fatalf("CreateAPIKey(%v) error = %v", scopes, err)
	}
	return k.Reveal(), rec.ID
}

// member puts a member with role on the team and returns its id and an
// access token of an AI assistant acting as them.
func (e *env) member(t *testing.T, email string, role licentia.Role) (id, token string) {
	t.Helper()
	m := &licentia.Member{ID: licentia.NewID(), OrgID: e.org.ID, Email: email, Role: role, CreatedAt: e.clock.Now()}
	if err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateMember(t.Context(), m) }); err != nil {
		t.Fatalf("CreateMember(%s) error = %v", role, err)
	}
	return m.ID, e.token(t, email)
}

// token returns a new access token acting as the member email, as
// `licentia assistant token` makes one.
func (e *env) token(t *testing.T, email string) string {
	t.Helper()
	at, err := e.admin.NewAssistantToken(t.Context(), licentia.OperatorActor, e.org.ID, email)
	if err != nil {
		t.Fatalf("NewAssistantToken(%s) error = %v", email, err)
	}
	return at.Token
}

// ownerID is the id of owner@acme.example, whom org create made owner.
func (e *env) ownerID(t *testing.T) string {
	t.Helper()
	ms, err := e.store.Members(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Email == "owner@acme.example" {
			return m.ID
		}
	}
	t.Fatalf("Members() = %v; no owner", ms)
	return ""
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens a session of the SDK's own client with token as the
// bearer credential.
func (e *env) connect(t *testing.T, token string) (*mcp.ClientSession, error) {
	t.Helper()
	hc := &http.Client{Transport: bearer{token: token, next: e.srv.Client().Transport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "licentia-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: e.srv.URL + mcpserver.Path, HTTPClient: hc,
		MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// session is connect that must succeed.
func (e *env) session(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := e.connect(t, token)
	if err != nil {
		t.Fatalf("Connect() error = %v", err)
	}
	return cs
}

// toolNames lists the tools the session is offered, in order.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("ListTools() error = %v", err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// callResult is a tool result as a test reads it: whether it is a tool
// error, its structured content re-encoded, and its text.
type callResult struct {
	isError    bool
	structured []byte
	text       string
}

// call calls a tool; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) callResult {
	t.Helper()
	res, err := callErr(t, cs, name, args)
	if err != nil {
		t.Fatalf("CallTool(%s) error = %v", name, err)
	}
	return res
}

func callErr(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (callResult, error) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return callResult{}, err
	}
	out := callResult{isError: res.IsError}
	if res.StructuredContent != nil {
		if out.structured, err = json.Marshal(res.StructuredContent); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out.text += tc.Text
		}
	}
	return out, nil
}

// apiAnswer is an answer of the API.
type apiAnswer struct {
	status int
	header http.Header
	body   []byte
}

// api calls the API over HTTP with token.
func (e *env) api(t *testing.T, method, path, token string, body any) apiAnswer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return apiAnswer{status: res.StatusCode, header: res.Header, body: bytes.TrimSpace(b)}
}

// post sends a raw JSON-RPC message to /mcp with the Authorization value
// given ("" for none).
func (e *env) post(t *testing.T, authorization, body string) apiAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", e.srv.URL+mcpserver.Path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return apiAnswer{status: res.StatusCode, header: res.Header, body: bytes.TrimSpace(b)}
}

// initialize is an initialize request of a client.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

// withoutRequestID is an error body without its request_id, which differs
// from answer to answer.
func withoutRequestID(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("error body %s: %v", b, err)
	}
	if e, ok := m["error"].(map[string]any); ok {
		if _, ok := e["request_id"].(string); !ok {
			t.Errorf("error body without request_id: %s", b)
		}
		delete(e, "request_id")
	}
	return m
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/console"
	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/logtest"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/oauth"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
)

// start is where every fake clock begins: on a whole hour, so each rate
// limit's window is whole.
var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// password is every test member's console password.
const password = "correct horse battery staple"

// redirectURI is the test client's redirect URI: a loopback listener, as
// desktop assistants register. Nothing listens there: the browser here
// follows no redirect, and the test reads the code from Location.
const redirectURI = "http://127.0.0.1:33418/callback"

// env is the service as serve assembles it, over real components: a real
// store, the API, the console with the consent page and the authorization
// server behind one TLS server whose address is the issuer, a fake clock
// and the in-memory rate limiter.
type env struct {
	srv   *httptest.Server
	base  string
	store store.Store
	clock *clock.Fake
	admin *admin.Service
	oauth *oauth.Service
	logs  *logtest.Buffer
	// org is an organization on the business plan whose owner is
	// owner@acme.example.
	org *licentia.Organization
}

// engines are the stores the server is held to: SQLite, and PostgreSQL
// when LICENTIA_TEST_POSTGRES_URL is set.
var engines = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"sqlite", storetest.OpenSQLite},
	{"postgres", storetest.OpenPostgres},
}

// onEngines runs test on a new env of every engine.
func onEngines(t *testing.T, test func(t *testing.T, e *env)) {
	for _, en := range engines {
		t.Run(en.name, func(t *testing.T) { test(t, newEnv(t, en.open)) })
	}
}

func newEnv(t *testing.T, open func(t *testing.T) store.Store) *env {
	t.Helper()
	st := open(t)
	clk := clock.NewFake(start)
	logs := &logtest.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	keys := signing.NewKeyring(nil)
	cat := signing.NewCatalogue(st, clk, log)
	limiter := ratelimit.NewMemory(clk)

	// The issuer is the server's own address, known once it listens; the
	// handler is set before any request.
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*handler.Load()).ServeHTTP(w, r)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	base := srv.URL

	svc := admin.New(admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: keys, Catalogue: cat,
		BaseURL: base, PublicURL: base, Mail: mail.NewOutbox(filepath.Join(t.TempDir(), "outbox"), ""), Logger: log})
	purchases := purchase.New(purchase.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat})
	api := httpapi.New(httpapi.Options{
		Store: st, Admin: svc, Purchases: purchases, Auth: auth.NewAuthenticator(st, clk), Limiter: limiter, Clock: clk, Logger: log,
		Activation: activation.New(activation.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat, Validity: time.Hour, Logger: log}),
	})
	authz := oauth.New(oauth.Options{Store: st, Clock: clk, Limiter: limiter, Logger: log, BaseURL: base})
	cons, err := console.New(console.Options{Store: st, Admin: svc, Purchases: purchases, OAuth: authz, Clock: clk,
		Limiter: limiter, Logger: log, BaseURL: base})
	if err != nil {
		t.Fatalf("console.New() error = %v", err)
	}
	// As serve's mount routes them.
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.Handle("/console/", cons.Handler())
	mux.Handle("/oauth/", authz.Handler())
	mux.Handle("/oauth/authorize", cons.Handler())
	mux.Handle("/.well-known/oauth-authorization-server", authz.Handler())
	mux.Handle("/.well-known/oauth-protected-resource", authz.Handler())
	mux.Handle("/.well-known/oauth-protected-resource/mcp", authz.Handler())
	var h http.Handler = mux
	handler.Store(&h)

	e := &env{srv: srv, base: base, store: st, clock: clk, admin: svc, oauth: authz, logs: logs}
	e.org, err = svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Acme", Slug: "acme", Plan: licentia.PlanBusiness, OwnerEmail: "owner@acme.example"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// browser is a person's browser: it keeps cookies and follows no
// redirect, so a test sees each answer.
type browser struct {
	e    *env
	http *http.Client
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	hc := *e.srv.Client()
	hc.Jar = jar
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &browser{e: e, http: &hc}
}

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) location() string { return a.header.Get("Location") }

// json decodes the answer's body into a map.
func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", a.status, err, a.body)
	}
	return m
}

func (b *browser) do(t *testing.T, method, path string, body string, headers map[string]string) answer {
	t.Helper()
	if !strings.HasPrefix(path, "http") {
		path = b.e.base + path
	}
	req, err := http.NewRequestWithContext(t.Context(), method, path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := b.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: buf.String()}
}

func (b *browser) get(t *testing.T, path string) answer {
	t.Helper()
	return b.do(t, http.MethodGet, path, "", nil)
}

// post sends a form.
func (b *browser) post(t *testing.T, path string, form url.Values) answer {
	t.Helper()
	return b.do(t, http.MethodPost, path, form.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
}

// postJSON sends a JSON body.
func (b *browser) postJSON(t *testing.T, path string, body any) answer {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b.do(t, http.MethodPost, path, string(raw), map[string]string{"Content-Type": "application/json"})
}

// member puts a member with role on the organization's team and sets
// their console password through a setup link.
func (e *env) member(t *testing.T, orgID, email string, role licentia.Role) *licentia.Member {
	t.Helper()
	m := &licentia.Member{ID: licentia.NewID(), OrgID: orgID, Email: email, Role: role, CreatedAt: e.clock.Now()}
	if role == licentia.RoleOwner {
		got, err := e.store.MemberByEmail(t.Context(), orgID, email)
		if err != nil {
			t.Fatal(err)
		}
		m = got
	} else if err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateMember(t.Context(), m) }); err != nil {
		t.Fatalf("CreateMember(%s) error = %v", role, err)
	}
	if _, err := e.store.AccountByEmail(t.Context(), email); err == nil {
		return m
	}
	l, err := e.admin.NewLoginLink(t.Context(), licentia.OperatorActor, orgID, email)
	if err != nil {
		t.Fatalf("NewLoginLink(%s) error = %v", email, err)
	}
	b := e.browser()
	if a := b.post(t, strings.TrimPrefix(l.URL, e.base), url.Values{"password": {password}}); a.status != http.StatusSeeOther {
		t.Fatalf("setting the password of %s: %d\n%s", email, a.status, a.body)
	}
	return m
}

// client is an AI assistant's OAuth client: registered here, with its
// x/oauth2 configuration and the PKCE verifier of its current request.
type client struct {
	id       string
	conf     *oauth2.Config
	verifier string
}

// register registers a client named name with redirectURI.
func (e *env) register(t *testing.T, name string) *client {
	t.Helper()
	a := e.browser().postJSON(t, "/oauth/register", map[string]any{
		"client_name": name, "redirect_uris": []string{redirectURI}, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("register: %d\n%s", a.status, a.body)
	}
	id, _ := a.json(t)["client_id"].(string)
	return &client{id: id, conf: &oauth2.Config{
		ClientID:    id,
		RedirectURL: redirectURI,
		Endpoint: oauth2.Endpoint{AuthURL: e.base + "/oauth/authorize", TokenURL: e.base + "/oauth/token",
			AuthStyle: oauth2.AuthStyleInParams},
	}}
}

// authorizeURL is the path of a new authorization request of c, for the
// MCP server, with a new PKCE verifier.
func (e *env) authorizeURL(c *client, state string) string {
	c.verifier = oauth2.GenerateVerifier()
	u := c.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(c.verifier),
		oauth2.SetAuthURLParam("resource", e.base+"/mcp"))
	return strings.TrimPrefix(u, e.base)
}

// hiddenField finds the consent form's hidden fields.
var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// consentForm is the consent page's form fields, as a browser sends them.
func consentForm(t *testing.T, page string) url.Values {
	t.Helper()
	form := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		form.Add(m[1], htmlUnescape(m[2]))
	}
	if form.Get("client_id") == "" {
		t.Fatalf("the consent page has no form:\n%s", page)
	}
	return form
}

// htmlUnescape undoes html/template's escaping of attribute values.
func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#43;", "+", "&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">", "&quot;", `"`).Replace(s)
}

// consent walks a member through an authorization request in a new
// browser: the request sends them to sign in, the sign-in form brings them
// back, and the consent form posts decision. It returns the consent page
// and the redirect that answered the form.
func (e *env) consent(t *testing.T, email, path, decision string) (page answer, redirect *url.URL) {
	t.Helper()
	b := e.browser()
	a := b.get(t, path)
	if a.status != http.StatusSeeOther || !strings.HasPrefix(a.location(), "/console/sign-in?next=") {
		t.Fatalf("authorize before sign-in: %d to %q, want 303 to sign in:\n%s", a.status, a.location(), a.body)
	}
	signIn := b.get(t, a.location())
	next := regexp.MustCompile(`name="next" value="([^"]*)"`).FindStringSubmatch(signIn.body)
	if signIn.status != http.StatusOK || next == nil {
		t.Fatalf("sign-in page: %d\n%s", signIn.status, signIn.body)
	}
	a = b.post(t, "/console/sign-in", url.Values{"email": {email}, "password": {password}, "next": {htmlUnescape(next[1])}})
	if a.status != http.StatusSeeOther || a.location() != path {
		t.Fatalf("sign in: %d to %q, want 303 to %q:\n%s", a.status, a.location(), path, a.body)
	}
	page = b.get(t, a.location())
	if page.status != http.StatusOK {
		t.Fatalf("consent page: %d\n%s", page.status, page.body)
	}
	form := consentForm(t, page.body)
	form.Set("decision", decision)
	a = b.post(t, "/oauth/authorize", form)
	if a.status != http.StatusSeeOther {
		t.Fatalf("consent form: %d, want 303:\n%s", a.status, a.body)
	}
	u, err := url.Parse(a.location())
	if err != nil {
		t.Fatal(err)
	}
	return page, u
}

// ctx carries the test server's HTTP client for x/oauth2.
func (e *env) ctx(t *testing.T) context.Context {
	return context.WithValue(t.Context(), oauth2.HTTPClient, e.srv.Client())
}

// authorize runs the code flow for c as the member email and returns the
// tokens.
func (e *env) authorize(t *testing.T, c *client, email string) *oauth2.Token {
	t.Helper()
	_, to := e.consent(t, email, e.authorizeURL(c, "state-1"), "allow")
	code := to.Query().Get("code")
	if code == "" {
		t.Fatalf("consent redirected to %s, want a code", to)
	}
	tok, err := c.conf.Exchange(e.ctx(t), code, oauth2.VerifierOption(c.verifier))
	if err != nil {
		t.Fatalf("Exchange() error = %v", err)
	}
	return tok
}

// refresh exchanges a refresh token through x/oauth2.
func (e *env) refresh(t *testing.T, c *client, refreshToken string) (*oauth2.Token, error) {
	t.Helper()
	return c.conf.TokenSource(e.ctx(t), &oauth2.Token{RefreshToken: refreshToken}).Token()
}

// tokenRequest posts a form to the token endpoint.
func (e *env) tokenRequest(t *testing.T, form url.Values) answer {
	t.Helper()
	return e.browser().post(t, "/oauth/token", form)
}

// api calls GET /v1/admin/organization with an access token and returns
// the status.
func (e *env) api(t *testing.T, accessToken string) answer {
	t.Helper()
	return e.browser().do(t, http.MethodGet, "/v1/admin/organization", "", map[string]string{"Authorization": "Bearer " + accessToken})
}

// wantOAuthError checks an answer is an RFC 6749 error with status and
// code, not stored.
func wantOAuthError(t *testing.T, what string, a answer, status int, code string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d:\n%s", what, a.status, status, a.body)
	}
	m := a.json(t)
	if m["error"] != code || m["error_description"] == "" || len(m) != 2 {
		t.Errorf("%s: body %v, want {error: %s, error_description}", what, m, code)
	}
	if a.header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		t.Errorf("%s: Cache-Control %q, Content-Type %q, want no-store JSON", what, a.header.Get("Cache-Control"), a.header.Get("Content-Type"))
	}
}

// retrieveError is the OAuth error code of an x/oauth2 call, or "".
func retrieveError(err error) string {
	if re, ok := err.(*oauth2.RetrieveError); ok {
		return re.ErrorCode
	}
	return ""
}

// oauth2VerifierOption is the option sending c's current verifier.
func oauth2VerifierOption(c *client) oauth2.AuthCodeOption { return oauth2.VerifierOption(c.verifier) }

// otherOrg is a second organization, owned by boss@beta.example.
func (e *env) otherOrg(t *testing.T) *licentia.Organization {
	t.Helper()
	o, err := e.admin.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Beta Works", Slug: "beta", Plan: licentia.PlanBusiness, OwnerEmail: "boss@beta.example"})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// signedIn is a browser signed in to the console as email.
func (e *env) signedIn(t *testing.T, email string) *browser {
	t.Helper()
	b := e.browser()
	if a := b.post(t, "/console/sign-in", url.Values{"email": {email}, "password": {password}}); a.status != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d\n%s", email, a.status, a.body)
	}
	return b
}

package console_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/console"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/logtest"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
)

// baseURL is LICENTIA_BASE_URL in tests: https, so the session cookie is
// __Host- and Secure, and the test server speaks TLS for the jar to send it.
const baseURL = "https://licentia.example.org"

// start is where every fake clock begins: on a whole minute, so each rate
// limit's window has 60 seconds left.
var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// password is every test member's console password.
const password = "correct horse battery staple"

// shopKey is the Stripe key the loopback fake accepts.
const shopKey = "sk_test_51ConsoleShopKeyForTestsOnly"

// env is the console in-process over real components: a real store, a fake
// clock, the in-memory rate limiter, the admin, activation and purchase
// services, mail to an outbox whose links it keeps, and a real TLS server.
type env struct {
	srv       *httptest.Server
	console   *console.Server
	store     store.Store
	admin     *admin.Service
	act       *activation.Service
	purchases *purchase.Service
	clock     *clock.Fake
	limiter   ratelimit.Limiter
	logs      *logtest.Buffer
	mail      *linkMail
	shop      *providertest.Stripe
	// metrics is what the console counts.
	metrics *metrics.Metrics
	// courier sends the queued mails to the outbox in outbox.
	courier *courier.Worker
	outbox  string
	// org is an organization on the business plan whose owner is
	// owner@acme.example.
	org *licentia.Organization
}

type envOptions struct {
	// open opens the store; SQLite unless set.
	open func(t *testing.T) store.Store
	// consoleBase is the console's BaseURL; baseURL unless set. plain
	// serves plain HTTP instead of TLS.
	consoleBase string
	plain       bool
	// baseDefaulted tells the console its base is only the listen address;
	// noAdminBase leaves the admin service without a base URL.
	baseDefaulted, noAdminBase bool
	// proxies are trusted, so a test can send from many client addresses
	// with X-Forwarded-For.
	proxies []netip.Prefix
	// limiter counts the rate limits; in memory on the fake clock unless
	// set.
	limiter ratelimit.Limiter
	// timeout bounds each request's work; the console's default unless
	// set.
	timeout time.Duration
}

// engines are the stores the console's behaviour is held to: SQLite, and
// PostgreSQL when LICENTIA_TEST_POSTGRES_URL is set.
var engines = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"sqlite", storetest.OpenSQLite},
	{"postgres", storetest.OpenPostgres},
}

// onEngines runs test on every engine.
func onEngines(t *testing.T, test func(t *testing.T, o envOptions)) {
	for _, en := range engines {
		t.Run(en.name, func(t *testing.T) { test(t, envOptions{open: en.open}) })
	}
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	if o.open == nil {
		o.open = storetest.OpenSQLite
	}
	if o.consoleBase == "" {
		o.consoleBase = baseURL
	}
	st := o.open(t)
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
	shop.AccountID = "acct_1ConsoleShop"
	shop.AddProduct("prod_basic")
	m := &linkMail{inner: mail.NewOutbox(filepath.Join(t.TempDir(), "outbox"), ""), links: map[string]string{}}
	adminBase := baseURL
	if o.noAdminBase {
		adminBase = ""
	}
	svc := admin.New(admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: keys, Catalogue: cat,
		BaseURL: adminBase, PublicURL: baseURL, Mail: m, Logger: log,
		Providers: map[providers.Name]providers.Provider{providers.Stripe: stripe.New(shop.URL(), 2*time.Second)}})
	if o.limiter == nil {
		o.limiter = ratelimit.NewMemory(clk)
	}
	e := &env{
		store: st, admin: svc, clock: clk, logs: logs, mail: m, shop: shop, limiter: o.limiter,
		act:       activation.New(activation.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat, Validity: 24 * time.Hour, Logger: log}),
		purchases: purchase.New(purchase.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat}),
		metrics:   metrics.New(metrics.Options{Logger: log}),
		outbox:    filepath.Join(t.TempDir(), "mails"),
	}
	e.courier = courier.New(courier.Options{Store: st, Clock: clk, Keys: keys, Sender: mail.NewOutbox(e.outbox, "Licentia <console@service.example>"),
		PublicURL: baseURL, Logger: log})
	c, err := console.New(console.Options{Store: st, Admin: svc, Purchases: e.purchases, Activation: e.act, Clock: clk, Limiter: e.limiter,
		Logger: log, BaseURL: o.consoleBase, BaseURLDefaulted: o.baseDefaulted, TrustedProxies: o.proxies, DatabaseTimeout: o.timeout, Metrics: e.metrics})
	if err != nil {
		t.Fatalf("console.New() error = %v", err)
	}
	e.console = c
	if o.plain {
		e.srv = httptest.NewServer(c.Handler())
	} else {
		e.srv = httptest.NewTLSServer(c.Handler())
	}
	t.Cleanup(e.srv.Close)
	e.org, err = svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Acme", Slug: "acme", Plan: licentia.PlanBusiness, OwnerEmail: "owner@acme.example"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// linkMail hands mail to the outbox and keeps each invitation's link path
// by address.
type linkMail struct {
	mu    sync.Mutex
	links map[string]string
	inner mail.Sender
}

var joinPath = regexp.MustCompile(`/console/join/[0-9A-Za-z]{43}`)

func (m *linkMail) Send(ctx context.Context, msg mail.Message) error {
	if err := m.inner.Send(ctx, msg); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.links[msg.To] = joinPath.FindString(msg.Text)
	return nil
}

// link is the path of the last invitation mailed to address.
func (m *linkMail) link(t *testing.T, address string) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.links[address]
	if l == "" {
		t.Fatalf("no invitation was mailed to %s", address)
	}
	return l
}

// client is a browser-like client of the console: it keeps cookies and
// does not follow redirects, so a test sees each answer.
type client struct {
	e    *env
	http *http.Client
	// headers are sent with every request, as a browser sends
	// Sec-Fetch-Site or a proxy X-Forwarded-For.
	headers map[string]string
}

func (e *env) client() *client {
	jar, _ := cookiejar.New(nil)
	// The server's client is shared: each client copies it, with a jar of
	// its own.
	hc := *e.srv.Client()
	hc.Jar = jar
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &client{e: e, http: &hc, headers: map[string]string{}}
}

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   string
}

// location is the path the answer redirects to.
func (a answer) location() string { return a.header.Get("Location") }

func (c *client) do(t *testing.T, method, path string, form url.Values, headers map[string]string) answer {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequestWithContext(t.Context(), method, c.e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	return answer{status: res.StatusCode, header: res.Header, body: b.String()}
}

func (c *client) get(t *testing.T, path string) answer {
	t.Helper()
	return c.do(t, http.MethodGet, path, nil, nil)
}

func (c *client) post(t *testing.T, path string, form url.Values) answer {
	t.Helper()
	return c.do(t, http.MethodPost, path, form, nil)
}

// sessionCookie is the client's session cookie for the console, or nil.
func (c *client) sessionCookie() *http.Cookie {
	u, _ := url.Parse(c.e.srv.URL + "/")
	for _, ck := range c.http.Jar.Cookies(u) {
		if strings.HasSuffix(ck.Name, "licentia_session") {
			return ck
		}
	}
	return nil
}

// member puts a member with role on orgID's team, without an account yet.
func (e *env) member(t *testing.T, orgID, email string, role licentia.Role) *licentia.Member {
	t.Helper()
	m := &licentia.Member{ID: licentia.NewID(), OrgID: orgID, Email: email, Role: role, CreatedAt: e.clock.Now()}
	if err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.CreateMember(t.Context(), m) }); err != nil {
		t.Fatalf("CreateMember(%s) error = %v", role, err)
	}
	return m
}

// setupLink makes a setup link for orgID's member email and returns its
// path.
func (e *env) setupLink(t *testing.T, orgID, email string) string {
	t.Helper()
	l, err := e.admin.NewLoginLink(t.Context(), licentia.OperatorActor, orgID, email)
	if err != nil {
		t.Fatalf("NewLoginLink(%s) error = %v", email, err)
	}
	return strings.TrimPrefix(l.URL, baseURL)
}

// signUp sets the password of orgID's member email through a setup link,
// which signs them in, and returns their client.
func (e *env) signUp(t *testing.T, orgID, email string) *client {
	t.Helper()
	c := e.client()
	link := e.setupLink(t, orgID, email)
	if a := c.get(t, link); a.status != http.StatusOK || !strings.Contains(a.body, `name="password"`) {
		t.Fatalf("GET setup link = %d, want 200 with a password field:\n%s", a.status, a.body)
	}
	a := c.post(t, link, url.Values{"password": {password}})
	if a.status != http.StatusSeeOther || a.location() != "/console/?done=joined" {
		t.Fatalf("POST setup link = %d to %q, want 303 to the overview:\n%s", a.status, a.location(), a.body)
	}
	return c
}

// owner is the organization's owner, signed in.
func (e *env) owner(t *testing.T) *client {
	t.Helper()
	return e.signUp(t, e.org.ID, "owner@acme.example")
}

// as is a member of e.org with role, signed in.
func (e *env) as(t *testing.T, role licentia.Role) *client {
	t.Helper()
	email := string(role) + "@acme.example"
	e.member(t, e.org.ID, email, role)
	return e.signUp(t, e.org.ID, email)
}

// signIn signs email in with pw from a new client.
func (e *env) signIn(t *testing.T, email, pw string) (*client, answer) {
	t.Helper()
	c := e.client()
	return c, c.post(t, "/console/sign-in", url.Values{"email": {email}, "password": {pw}})
}

// product creates product id in orgID.
func (e *env) product(t *testing.T, orgID, id, prefix string) {
	t.Helper()
	one := int64(1)
	_, err := e.admin.CreateProduct(t.Context(), licentia.OperatorActor, orgID, admin.NewProduct{
		ID: &id, Name: ptr("Product " + id), KeyPrefix: &prefix, CurrentMajor: &one})
	if err != nil {
		t.Fatalf("CreateProduct(%s) error = %v", id, err)
	}
}

// issue issues a licence of productID to email in orgID, and returns it
// with its key.
func (e *env) issue(t *testing.T, orgID, productID, email string) *admin.LicenceView {
	t.Helper()
	two := int64(2)
	v, err := e.admin.IssueLicence(t.Context(), licentia.OperatorActor, orgID, admin.NewLicence{
		ProductID: &productID, Email: &email, LimitCount: &two})
	if err != nil {
		t.Fatalf("IssueLicence() error = %v", err)
	}
	return v
}

// activate takes a seat on a licence for machine.
func (e *env) activate(t *testing.T, key, machine string) *licentia.Activation {
	t.Helper()
	res, err := e.act.Activate(t.Context(), activation.Activate{LicenceKey: &key, MachineID: &machine,
		Label: ptr("Laptop " + machine), OS: ptr("linux"), AppVersion: ptr("1.0.0")})
	if err != nil {
		t.Fatalf("Activate(%s) error = %v", machine, err)
	}
	return res.Activation
}

func ptr[T any](v T) *T { return &v }

// wantStatus fails unless a has status.
func wantStatus(t *testing.T, what string, a answer, status int) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d:\n%s", what, a.status, status, a.body)
	}
}

// wantSeeOther fails unless a redirects to location with 303.
func wantSeeOther(t *testing.T, what string, a answer, location string) {
	t.Helper()
	if a.status != http.StatusSeeOther || a.location() != location {
		t.Fatalf("%s: %d to %q, want 303 to %q:\n%s", what, a.status, a.location(), location, a.body)
	}
}

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

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

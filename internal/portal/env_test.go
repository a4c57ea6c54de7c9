package portal_test

import (
	"bytes"
	"crypto/rand"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/logtest"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/mail/mailtest"
	"github.com/licentia/licentia/internal/portal"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
)

// baseURL is the public base URL in tests: https, so the session cookie
// is __Host- and Secure, and the test server speaks TLS for the jar to
// send it.
const baseURL = "https://licences.acme.example"

// start is where every fake clock begins, on a whole hour.
var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// env is the portal in-process over real components: a real store, a fake
// clock, the in-memory rate limiter, the admin and activation services,
// the courier mailing to an outbox, and a real TLS server.
type env struct {
	srv     *httptest.Server
	store   store.Store
	admin   *admin.Service
	act     *activation.Service
	courier *courier.Worker
	clock   *clock.Fake
	logs    *logtest.Buffer
	outbox  string
	// org is Acme (slug acme), with products photo and sync.
	org *licentia.Organization
}

type envOptions struct {
	open  func(t *testing.T) store.Store
	plain bool
	// proxies are trusted, so a test can send from many client addresses.
	proxies []netip.Prefix
}

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
	outbox := filepath.Join(t.TempDir(), "outbox")
	e := &env{store: st, clock: clk, logs: logs, outbox: outbox,
		admin: admin.New(admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: keys, Catalogue: cat,
			BaseURL: baseURL, PublicURL: baseURL, Logger: log}),
		act: activation.New(activation.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat, Validity: 24 * time.Hour, Logger: log}),
		courier: courier.New(courier.Options{Store: st, Clock: clk, Keys: keys, Sender: mail.NewOutbox(outbox, "Licentia <licences@service.example>"),
			PublicURL: baseURL, Logger: log}),
	}
	base := baseURL
	if o.plain {
		base = strings.Replace(baseURL, "https:", "http:", 1)
	}
	p, err := portal.New(portal.Options{Store: st, Admin: e.admin, Activation: e.act, Keys: keys, Clock: clk,
		Limiter: ratelimit.NewMemory(clk), Logger: log, BaseURL: base, TrustedProxies: o.proxies})
	if err != nil {
		t.Fatalf("portal.New() error = %v", err)
	}
	if o.plain {
		e.srv = httptest.NewServer(p.Handler())
	} else {
		e.srv = httptest.NewTLSServer(p.Handler())
	}
	t.Cleanup(e.srv.Close)
	e.org = e.organization(t, "Acme", "acme")
	for _, id := range []string{"photo", "sync"} {
		e.product(t, e.org.ID, id)
	}
	return e
}

func (e *env) organization(t *testing.T, name, slug string) *licentia.Organization {
	t.Helper()
	o, err := e.admin.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: name, Slug: slug, Plan: licentia.PlanBusiness, OwnerEmail: "owner@" + slug + ".example"})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (e *env) product(t *testing.T, orgID, id string) {
	t.Helper()
	one := int64(1)
	name := map[string]string{"photo": "Photo Studio", "sync": "Sync Pro"}[id]
	if name == "" {
		name = "Product " + id
	}
	_, err := e.admin.CreateProduct(t.Context(), licentia.OperatorActor, orgID, admin.NewProduct{
		ID: &id, Name: &name, KeyPrefix: ptr(strings.ToUpper(id)), CurrentMajor: &one})
	if err != nil {
		t.Fatalf("CreateProduct(%s) error = %v", id, err)
	}
}

// issue issues a licence of productID to email in orgID.
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

// send runs the courier once and returns the mails in the outbox.
func (e *env) send(t *testing.T) []mailtest.Raw {
	t.Helper()
	if _, err := e.courier.RunOnce(t.Context()); err != nil {
		t.Fatalf("courier RunOnce() error = %v", err)
	}
	return mailtest.Outbox(t, e.outbox)
}

var signInLink = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(baseURL) + `(/portal/[a-z0-9-]+/sign-in/[A-Za-z0-9_-]{43})\r?$`)

// linkTo is the path of the sign-in link of the last mail to address in
// the outbox, read from the raw text part as it stands on its own line.
func linkTo(t *testing.T, mails []mailtest.Raw, address string) string {
	t.Helper()
	for i := len(mails) - 1; i >= 0; i-- {
		if !strings.Contains(mails[i].Header.Get("To"), address) {
			continue
		}
		if m := signInLink.FindStringSubmatch(mails[i].RawText); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no sign-in link was mailed to %s", address)
	return ""
}

// client is a browser-like client: it keeps cookies and does not follow
// redirects, so a test sees each answer.
type client struct {
	e       *env
	http    *http.Client
	headers map[string]string
}

func (e *env) client() *client {
	jar, _ := cookiejar.New(nil)
	hc := *e.srv.Client()
	hc.Jar = jar
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &client{e: e, http: &hc, headers: map[string]string{}}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) location() string { return a.header.Get("Location") }

func (c *client) send(t *testing.T, method, path, contentType string, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, c.e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range c.headers {
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
	return c.send(t, http.MethodGet, path, "", nil)
}

func (c *client) post(t *testing.T, path string, form url.Values) answer {
	t.Helper()
	return c.send(t, http.MethodPost, path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
}

// upload posts a request file as the offline form does.
func (c *client) upload(t *testing.T, path string, file []byte) answer {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, err := mw.CreateFormFile("request", "licentia-offline-request.json")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(file)
	mw.Close()
	return c.send(t, http.MethodPost, path, mw.FormDataContentType(), &b)
}

// signIn signs email in to the organization slug's portal by the link
// mailed to it, and returns the client.
func (e *env) signIn(t *testing.T, slug, email string) *client {
	t.Helper()
	c := e.client()
	a := c.post(t, "/portal/"+slug+"/sign-in", url.Values{"email": {email}})
	wantStatus(t, "POST sign-in", a, http.StatusOK)
	link := linkTo(t, e.send(t), strings.ToLower(email))
	wantStatus(t, "GET link", c.get(t, link), http.StatusOK)
	wantSeeOther(t, "POST link", c.post(t, link, url.Values{}), "/portal/"+slug+"/")
	return c
}

func ptr[T any](v T) *T { return &v }

func wantStatus(t *testing.T, what string, a answer, status int) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d:\n%s", what, a.status, status, a.body)
	}
}

func wantSeeOther(t *testing.T, what string, a answer, location string) {
	t.Helper()
	if a.status != http.StatusSeeOther || a.location() != location {
		t.Fatalf("%s: %d to %q, want 303 to %q:\n%s", what, a.status, a.location(), location, a.body)
	}
}

package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/build"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/store/storetest"
	"github.com/licentia/licentia/internal/webhooks"
)

// testBaseURL is the service's address in tests (LICENTIA_BASE_URL).
const testBaseURL = "https://licentia.example.org"

// start is where every fake clock begins: on a whole minute, so the admin
// rate-limit window has 60 seconds left.
var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// verdictValidity is LICENTIA_VERDICT_VALIDITY in every env: how long a
// verdict may be used offline.
const verdictValidity = 7 * 24 * time.Hour

// testEnv is the real service in-process: SQLite in a temporary directory, a
// fake clock, the in-memory rate limiter, the activation service with its
// product catalogue, and a real HTTP server.
type testEnv struct {
	srv   *httptest.Server
	api   *httpapi.Server
	store store.Store
	admin *admin.Service
	clock *clock.Fake
	logs  *logBuffer
	// master is the env's master key (nil with noMasterKey), and cat the
	// catalogue of products the activation routes verify keys against.
	master *signing.MasterKey
	keys   *signing.Keyring
	cat    *signing.Catalogue
	// worker sends due webhook deliveries when a test calls RunOnce; its
	// client reaches hooks, the env's TLS receiver on loopback. Both are
	// nil unless the env was made with webhooks.
	worker *webhooks.Worker
	hooks  *hookReceiver
	// org is an organization on the business plan, made for every env.
	org *licentia.Organization
	// outbox is where invitations are written, unless envOptions.mail
	// replaced it.
	outbox string
	// metrics is what the server counts; nil unless the env was made with
	// metrics.
	metrics *metrics.Metrics
}

type envOptions struct {
	trustedProxies []netip.Prefix
	ready          func() error
	// setup runs before the server starts, to register test-only routes.
	setup func(*httpapi.Server)
	// noMasterKey serves without a master key, as when
	// LICENTIA_MASTER_KEY_FILE cannot be loaded: product creation and
	// rotation answer 503 signing_keys_not_configured. Without it, and
	// without masterKey, the env has a master key of 32 random bytes.
	noMasterKey bool
	// masterKey, when set, is the master key instead of a random one.
	masterKey *signing.MasterKey
	// shareStore, when set, serves that env's store, clock and organization
	// from a second server instead of a new database, as another process
	// sharing the database would.
	shareStore *testEnv
	// wrapStore, when set, wraps the store the server and its operations
	// use, to make a dependency fail; the env's store stays the real one.
	wrapStore func(store.Store) store.Store
	// limiter, when set, replaces the in-memory rate limiter (benchmarks
	// use one that always allows).
	limiter ratelimit.Limiter
	// clockStart, when set, is where the fake clock begins instead of start.
	clockStart time.Time
	// providers are the payment providers' adapters (none without).
	providers map[providers.Name]providers.Provider
	// noBaseURL serves without LICENTIA_BASE_URL: every webhook route
	// answers 503 webhooks_not_configured.
	noBaseURL bool
	// databaseTimeout, when set, bounds each request's work instead of the
	// default.
	databaseTimeout time.Duration
	// mail, when set, sends invitations instead of the env's outbox.
	mail mail.Sender
	// webhooks adds a delivery worker and a TLS receiver on loopback that
	// receiverHost (and silentHost, which never answers) are pinned to; the
	// worker trusts only the receiver's certificate.
	webhooks bool
	// metrics counts in env.metrics, as serve does with
	// LICENTIA_METRICS_LISTEN; without it nothing is counted.
	metrics bool
	// postgres serves a fresh PostgreSQL schema (LICENTIA_TEST_POSTGRES_URL)
	// instead of SQLite.
	postgres bool
	// build, when set, is what /healthz says of the binary instead of the
	// test binary's own.
	build build.Info
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	return newTestEnvWith(t, envOptions{})
}

// newTestEnvWith takes a testing.TB so benchmarks can serve the same env.
func newTestEnvWith(t testing.TB, o envOptions) *testEnv {
	t.Helper()
	var st store.Store
	var clk *clock.Fake
	if o.shareStore != nil {
		st, clk = o.shareStore.store, o.shareStore.clock
	} else if o.postgres {
		st, clk = storetest.OpenPostgresTB(t), clock.NewFake(start)
	} else {
		db, err := sqlite.Open(t.Context(), storetest.SQLiteFile(t))
		if err != nil {
			t.Fatalf("sqlite.Open() error = %v", err)
		}
		t.Cleanup(func() { db.Close() })
		clk = clock.NewFake(start)
		if !o.clockStart.IsZero() {
			clk = clock.NewFake(o.clockStart)
		}
		st = db
	}
	served := st
	if o.wrapStore != nil {
		served = o.wrapStore(st)
	}
	logs := &logBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	master := o.master(t)
	keys := signing.NewKeyring(master)
	// As serve does: the catalogue is loaded once before serving, reloaded
	// after every product change here, and on a key it cannot verify once
	// its clock has moved a second.
	cat := signing.NewCatalogue(served, clk, log)
	if err := cat.Refresh(t.Context()); err != nil {
		t.Fatalf("Catalogue.Refresh() error = %v", err)
	}
	baseURL := testBaseURL
	if o.noBaseURL {
		baseURL = ""
	}
	outbox := filepath.Join(t.TempDir(), "outbox")
	var sender mail.Sender = mail.NewOutbox(outbox, "")
	if o.mail != nil {
		sender = o.mail
	}
	svc := admin.New(admin.Options{Store: served, Clock: clk, Plans: licentia.DefaultPlans(), Keys: keys, Catalogue: cat,
		BaseURL: baseURL, PublicURL: testBaseURL, Providers: o.providers, Mail: sender, Logger: log})
	var m *metrics.Metrics
	if o.metrics {
		m = metrics.New(metrics.Options{PendingDeliveries: served.CountPendingDeliveries, Logger: log,
			LeasesInUse: func(ctx context.Context) (int64, error) { return served.CountLeasesInUse(ctx, clk.Now()) }})
	}
	var limiter ratelimit.Limiter = ratelimit.NewMemory(clk)
	if o.limiter != nil {
		limiter = o.limiter
	}
	api := httpapi.New(httpapi.Options{
		Store: served,
		Admin: svc,
		Activation: activation.New(activation.Options{
			Store: served, Clock: clk, Keys: keys, Catalogue: cat, Validity: verdictValidity, Logger: log,
		}),
		Purchases:       purchase.New(purchase.Options{Store: served, Clock: clk, Keys: keys, Catalogue: cat}),
		Auth:            auth.NewAuthenticator(served, clk),
		Limiter:         limiter,
		Clock:           clk,
		Logger:          log,
		TrustedProxies:  o.trustedProxies,
		Ready:           o.ready,
		DatabaseTimeout: o.databaseTimeout,
		Metrics:         m,
		Build:           o.build,
	})
	if o.setup != nil {
		o.setup(api)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	e := &testEnv{srv: srv, api: api, store: st, admin: svc, clock: clk, logs: logs, master: master, keys: keys, cat: cat, outbox: outbox,
		metrics: m}
	if o.webhooks {
		e.hooks = newHookReceiver(t)
		e.worker = webhooks.NewWorker(webhooks.WorkerOptions{
			Store: st, Clock: clk, Keys: keys, Client: e.hooks.client(t), BaseURL: testBaseURL, Logger: log,
		})
	}
	if o.shareStore != nil {
		e.org = o.shareStore.org
		return e
	}
	e.org = e.createOrg(t, "acme", licentia.PlanBusiness)
	return e
}

// master returns the env's master key: none, the one chosen, or 32 random
// bytes.
func (o envOptions) master(t testing.TB) *signing.MasterKey {
	t.Helper()
	switch {
	case o.noMasterKey:
		return nil
	case o.masterKey != nil:
		return o.masterKey
	}
	return newMasterKey(t)
}

// newMasterKey returns a master key of 32 random bytes.
func newMasterKey(t testing.TB) *signing.MasterKey {
	t.Helper()
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatalf("NewMasterKey() error = %v", err)
	}
	return m
}

// createOrg creates an organization as the operator, with its owner.
func (e *testEnv) createOrg(t testing.TB, slug string, plan licentia.PlanID) *licentia.Organization {
	t.Helper()
	o, err := e.admin.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Org " + slug, Slug: slug, Plan: plan, OwnerEmail: "owner@" + slug + ".example",
	})
	if err != nil {
		t.Fatalf("CreateOrganization(%s) error = %v", slug, err)
	}
	return o
}

// key creates an API key in orgID holding scopes and returns it in clear.
func (e *testEnv) key(t *testing.T, orgID string, scopes ...licentia.Scope) string {
	t.Helper()
	key, _ := e.newKey(t, orgID, admin.NewAPIKey{Name: "test", Scopes: scopes})
	return key
}

// newKey creates an API key and returns it in clear with its record.
func (e *testEnv) newKey(t *testing.T, orgID string, in admin.NewAPIKey) (string, *licentia.APIKey) {
	t.Helper()
	key, rec, err := e.admin.CreateAPIKey(t.Context(), licentia.OperatorActor, orgID, in)
	if err != nil {
		t.Fatalf("CreateAPIKey(%v) error = %v", in.Scopes, err)
	}
	return key.Reveal(), rec
}

// keyScopes are all the scopes a key may hold (every scope but members:write).
func keyScopes() []licentia.Scope {
	var out []licentia.Scope
	for _, s := range licentia.Scopes {
		if licentia.IsKeyScope(s) {
			out = append(out, s)
		}
	}
	return out
}

// scopesBut returns every key scope except s.
func scopesBut(s licentia.Scope) []licentia.Scope {
	var out []licentia.Scope
	for _, have := range keyScopes() {
		if have != s {
			out = append(out, have)
		}
	}
	return out
}

// call is one HTTP request.
type call struct {
	method, path string
	// key is sent as "Authorization: Bearer <key>" when not empty.
	key string
	// body is sent as is when a string or []byte, and marshalled otherwise.
	body    any
	headers map[string]string
	// more adds header values after headers, so that a name can be sent
	// more than once.
	more http.Header
	// invalid marks a request that breaks the document on purpose (no key, a
	// bad request id, an unknown route or parameter): only the answer is
	// validated against it.
	invalid bool
}

// resp is an answer.
type resp struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request the document allows and checks both it and the answer
// against openapi.json.
func (e *testEnv) do(t *testing.T, method, path, key string, body any, headers map[string]string) *resp {
	t.Helper()
	return e.send(t, call{method: method, path: path, key: key, body: body, headers: headers})
}

// doInvalid sends a request that breaks the document on purpose and checks
// the answer against openapi.json.
func (e *testEnv) doInvalid(t *testing.T, method, path, key string, body any, headers map[string]string) *resp {
	t.Helper()
	return e.send(t, call{method: method, path: path, key: key, body: body, headers: headers, invalid: true})
}

// send sends c, validates the exchange against openapi.json and checks the
// conventions every answer keeps.
func (e *testEnv) send(t *testing.T, c call) *resp {
	t.Helper()
	return e.sendWith(t, e.srv.Client(), c)
}

// sendWith is send through client.
func (e *testEnv) sendWith(t *testing.T, client *http.Client, c call) *resp {
	t.Helper()
	raw := encodeBody(t, c.body)
	res, err := client.Do(e.request(t, c, raw))
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", c.method, c.path, err)
	}
	r := &resp{status: res.StatusCode, header: res.Header, body: b}
	validateExchange(t, e.request(t, c, raw), r, c.invalid)
	checkConventions(t, c, r)
	return r
}

// request builds the HTTP request of c; the validator reads its own copy.
func (e *testEnv) request(t *testing.T, c call, raw []byte) *http.Request {
	t.Helper()
	var body io.Reader
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), c.method, e.srv.URL+c.path, body)
	if err != nil {
		t.Fatalf("NewRequest(%s %s) error = %v", c.method, c.path, err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	for k, vs := range c.more {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	return req
}

func encodeBody(t *testing.T, body any) []byte {
	t.Helper()
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return []byte(b)
	case []byte:
		return b
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("json.Marshal(%v) error = %v", body, err)
	}
	return raw
}

// checkConventions checks what every answer carries: Cache-Control:
// no-store, X-Content-Type-Options: nosniff, a request id (the client's
// when it has the contract's shape), the same id in an error body, and
// never a plain Retry-After.
func checkConventions(t *testing.T, c call, r *resp) {
	t.Helper()
	if got := r.header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("%s %s: Cache-Control = %q, want no-store", c.method, c.path, got)
	}
	if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s %s: X-Content-Type-Options = %q, want nosniff", c.method, c.path, got)
	}
	if got := r.header.Values("Retry-After"); got != nil {
		t.Errorf("%s %s: Retry-After = %q, want none", c.method, c.path, got)
	}
	id := r.header.Get("X-Request-Id")
	if sent, ok := headerValue(c.headers, "X-Request-Id"); ok && requestIDShape(sent) && id != sent {
		t.Errorf("%s %s: X-Request-Id = %q, want the client's %q", c.method, c.path, id, sent)
	}
	if r.status >= 400 {
		if got := r.apiError(t).RequestID; got != id {
			t.Errorf("%s %s: error request_id = %q, want X-Request-Id %q", c.method, c.path, got, id)
		}
	}
}

func headerValue(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// requestIDShape reports whether id has the contract's shape: 8 to 64 of
// A-Z a-z 0-9 . _ -.
func requestIDShape(id string) bool {
	if len(id) < 8 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// apiError is the "error" object of a failure.
type apiError struct {
	Code      licentia.Code  `json:"code"`
	Message   string         `json:"message"`
	Details   map[string]any `json:"details"`
	RequestID string         `json:"request_id"`
}

func (r *resp) apiError(t *testing.T) apiError {
	t.Helper()
	var b struct {
		Error apiError `json:"error"`
	}
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	return b.Error
}

// json decodes the answer into a generic value, for cmp.Diff with a want.
func (r *resp) json(t *testing.T) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("answer %q is not JSON: %v", r.body, err)
	}
	return v
}

// scenario is one request and the answer expected, in the manner of
// pocketbase's ApiScenario.
type scenario struct {
	name       string
	call       call
	wantStatus int
	// wantCode and wantDetails are checked on failures.
	wantCode    licentia.Code
	wantDetails map[string]any
	// wantBody, when set, is the whole answer as JSON.
	wantBody string
	// notWant lists strings the answer body must not contain.
	notWant []string
}

// run sends the scenario's request and checks the answer.
func (e *testEnv) run(t *testing.T, tt scenario) *resp {
	t.Helper()
	r := e.send(t, tt.call)
	if r.status != tt.wantStatus {
		t.Errorf("%s %s status = %d, want %d; body %s", tt.call.method, tt.call.path, r.status, tt.wantStatus, r.body)
	}
	if tt.wantCode != "" {
		got := r.apiError(t)
		if got.Code != tt.wantCode {
			t.Errorf("%s %s code = %q, want %q", tt.call.method, tt.call.path, got.Code, tt.wantCode)
		}
		if diff := cmp.Diff(tt.wantDetails, got.Details); diff != "" {
			t.Errorf("%s %s details mismatch (-want +got):\n%s", tt.call.method, tt.call.path, diff)
		}
	}
	if tt.wantBody != "" {
		var want any
		if err := json.Unmarshal([]byte(tt.wantBody), &want); err != nil {
			t.Fatalf("wantBody: %v", err)
		}
		if diff := cmp.Diff(want, r.json(t)); diff != "" {
			t.Errorf("%s %s answer mismatch (-want +got):\n%s", tt.call.method, tt.call.path, diff)
		}
	}
	for _, s := range tt.notWant {
		if bytes.Contains(r.body, []byte(s)) {
			t.Errorf("%s %s answer contains %q: %s", tt.call.method, tt.call.path, s, r.body)
		}
	}
	return r
}

// repeat sends c n times without validating against the document (the
// rate-limit tests send hundreds) and checks each status.
func (e *testEnv) repeat(t *testing.T, n int, c call, wantStatus int) {
	t.Helper()
	for i := range n {
		req := e.request(t, c, encodeBody(t, c.body))
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != wantStatus {
			t.Fatalf("request %d to %s %s: status = %d, want %d", i+1, c.method, c.path, res.StatusCode, wantStatus)
		}
	}
}

// adminRoute is one administration route of routes.go.
type adminRoute struct {
	method, pattern string
	scope           licentia.Scope
	// body is one the document accepts, for routes that take a body.
	body any
}

// adminRoutes lists every administration route; TestRouteTable holds it to
// routes.go and openapi.json.
var adminRoutes = []adminRoute{
	{"GET", "/v1/admin/products", licentia.ScopeProductsRead, nil},
	{"POST", "/v1/admin/products", licentia.ScopeProductsWrite, map[string]any{"id": "desk-app", "name": "Desk", "key_prefix": "DESK", "current_major": 1}},
	{"GET", "/v1/admin/products/{id}", licentia.ScopeProductsRead, nil},
	{"PATCH", "/v1/admin/products/{id}", licentia.ScopeProductsWrite, map[string]any{"name": "Desk 2"}},
	{"POST", "/v1/admin/products/{id}/rotate-signing-key", licentia.ScopeProductsWrite, map[string]any{"keep_previous": true}},
	{"POST", "/v1/admin/products/{id}/retire-public-key", licentia.ScopeProductsWrite, map[string]any{"public_key": strings.Repeat("ab", 32)}},
	{"GET", "/v1/admin/products/{id}/features", licentia.ScopeProductsRead, nil},
	{"PUT", "/v1/admin/products/{id}/features/{code}", licentia.ScopeProductsWrite, map[string]any{"name": "PDF export"}},
	{"DELETE", "/v1/admin/products/{id}/features/{code}", licentia.ScopeProductsWrite, nil},
	{"POST", "/v1/admin/licences", licentia.ScopeLicencesWrite, map[string]any{"product_id": "desk-app", "email": "ada@example.com"}},
	{"GET", "/v1/admin/licences", licentia.ScopeLicencesRead, nil},
	{"GET", "/v1/admin/licences/counts", licentia.ScopeLicencesRead, nil},
	{"GET", "/v1/admin/licences/list", licentia.ScopeLicencesRead, nil},
	{"GET", "/v1/admin/licences/export", licentia.ScopeLicencesRead, nil},
	{"GET", "/v1/admin/licences/{id}", licentia.ScopeLicencesRead, nil},
	{"PATCH", "/v1/admin/licences/{id}", licentia.ScopeLicencesWrite, map[string]any{"limit_count": 2}},
	{"GET", "/v1/admin/licences/{id}/audit", licentia.ScopeAuditRead, nil},
	{"POST", "/v1/admin/licences/{id}/revoke", licentia.ScopeLicencesWrite, map[string]any{"reason": "refund"}},
	{"POST", "/v1/admin/licences/{id}/reissue", licentia.ScopeLicencesWrite, map[string]any{"reason": "leaked"}},
	{"POST", "/v1/admin/licences/{id}/expire", licentia.ScopeLicencesWrite, map[string]any{"reason": "term over"}},
	{"POST", "/v1/admin/licences/{id}/reinstate", licentia.ScopeLicencesWrite, map[string]any{"reason": "paid"}},
	{"POST", "/v1/admin/licences/{id}/anonymise", licentia.ScopeLicencesAnonymise, map[string]any{"confirm": true}},
	{"POST", "/v1/admin/licences/{id}/send-key", licentia.ScopeLicencesWrite, map[string]any{}},
	{"POST", "/v1/admin/activations/{id}/deactivate", licentia.ScopeLicencesWrite, nil},
	{"GET", "/v1/admin/organization", licentia.ScopeOrganizationRead, nil},
	{"GET", "/v1/admin/members", licentia.ScopeMembersRead, nil},
	{"GET", "/v1/admin/invitations", licentia.ScopeMembersRead, nil},
	{"POST", "/v1/admin/invitations", licentia.ScopeMembersWrite, map[string]any{"email": "new@acme.example", "role": "admin"}},
	{"POST", "/v1/admin/invitations/{id}/revoke", licentia.ScopeMembersWrite, nil},
	{"PUT", "/v1/admin/members/{id}/role", licentia.ScopeMembersWrite, map[string]any{"role": "admin"}},
	{"DELETE", "/v1/admin/members/{id}", licentia.ScopeMembersWrite, nil},
	{"GET", "/v1/admin/integrations", licentia.ScopeProviderRead, nil},
	{"GET", "/v1/admin/integrations/{id}/mappings", licentia.ScopeProviderRead, nil},
	{"PUT", "/v1/admin/integrations/{id}/mappings/{providerProductId}", licentia.ScopeProviderWrite, map[string]any{"product_id": "desk-app"}},
	{"DELETE", "/v1/admin/integrations/{id}/mappings/{providerProductId}", licentia.ScopeProviderWrite, nil},
	{"GET", "/v1/admin/orders/held", licentia.ScopeProviderRead, nil},
	{"POST", "/v1/admin/orders/held/{id}/release", licentia.ScopeProviderWrite, map[string]any{"limit_count": 2}},
	{"DELETE", "/v1/admin/orders/held/{id}", licentia.ScopeProviderWrite, nil},
	{"GET", "/v1/admin/webhooks", licentia.ScopeWebhooksRead, nil},
	{"POST", "/v1/admin/webhooks", licentia.ScopeWebhooksWrite, map[string]any{"url": "https://hooks.example.com/licentia", "event_types": []string{"licence.issued"}}},
	{"GET", "/v1/admin/webhooks/{id}", licentia.ScopeWebhooksRead, nil},
	{"PATCH", "/v1/admin/webhooks/{id}", licentia.ScopeWebhooksWrite, map[string]any{"enabled": false}},
	{"DELETE", "/v1/admin/webhooks/{id}", licentia.ScopeWebhooksWrite, nil},
	{"POST", "/v1/admin/webhooks/{id}/rotate-secret", licentia.ScopeWebhooksWrite, nil},
	{"GET", "/v1/admin/webhooks/{id}/deliveries", licentia.ScopeWebhooksRead, nil},
	{"POST", "/v1/admin/webhooks/{id}/deliveries/{deliveryId}/retry", licentia.ScopeWebhooksWrite, nil},
}

// activationRoute is one activation route of routes.go: no key, the public
// rate limit, the licence key in the body.
type activationRoute struct{ method, pattern string }

// publicRoutes lists every activation route; TestRouteTable holds it to
// routes.go and openapi.json.
var publicRoutes = []activationRoute{
	{"POST", "/v1/activations"},
	{"POST", "/v1/activations/offline"},
	{"POST", "/v1/activations/status"},
	{"POST", "/v1/activations/deactivate"},
	{"POST", "/v1/leases"},
	{"POST", "/v1/leases/renew"},
	{"POST", "/v1/leases/release"},
}

func (rt activationRoute) String() string { return rt.method + " " + rt.pattern }

// someID and otherID are UUIDs that name nothing.
const (
	someID  = "5f0c6f4e-3b7a-4c1d-9e2f-0a1b2c3d4e5f"
	otherID = "0d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"
)

func (rt adminRoute) String() string { return rt.method + " " + rt.pattern }

// path fills the pattern's wildcards with valid values (a UUID is also a
// valid product id).
func (rt adminRoute) path() string {
	return strings.NewReplacer("{id}", someID, "{providerProductId}", "prod_Desk-1", "{deliveryId}", otherID, "{code}", "export-pdf").Replace(rt.pattern)
}

// call is a request to the route with key that the document allows.
func (rt adminRoute) call(key string) call {
	return call{method: rt.method, path: rt.path(), key: key, body: rt.body}
}

// isTeamChange reports whether the route changes the team, which no key may do.
func (rt adminRoute) isTeamChange() bool { return rt.scope == licentia.ScopeMembersWrite }

// isIntegration reports whether the route is an integration or mapping
// route. The held-order routes share their scopes, but need no master key:
// without one no order is ever held.
func (rt adminRoute) isIntegration() bool {
	return strings.HasPrefix(rt.pattern, "/v1/admin/integrations")
}

// logBuffer collects the server's log lines; handlers write from their own
// goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// uuidPattern is the shape the service accepts as a UUID: 8-4-4-4-12
// hexadecimal digits of any case and any version.
const uuidPattern = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`

// document is openapi.json, loaded and validated once per test binary.
type document struct {
	doc    *openapi3.T
	router routers.Router
	// unrouted holds the answers to a path or method the document does not
	// list: 404 not_found, 405 method_not_allowed, or 500 from a test-only
	// route.
	unrouted *routers.Route
}

var loadDocument = sync.OnceValues(func() (*document, error) {
	// kin-openapi checks no uuid format unless one is registered.
	openapi3.DefineStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(uuidPattern))
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("load openapi.json: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("validate openapi.json: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route openapi.json: %w", err)
	}
	rs := doc.Components.Responses
	unrouted := &routers.Route{Spec: doc, Path: "/{unrouted}", Operation: &openapi3.Operation{
		Responses: openapi3.NewResponses(
			openapi3.WithStatus(http.StatusNotFound, rs["NotFound"]),
			openapi3.WithStatus(http.StatusMethodNotAllowed, rs["MethodNotAllowed"]),
			openapi3.WithStatus(http.StatusInternalServerError, rs["InternalError"]),
		),
	}}
	return &document{doc: doc, router: router, unrouted: unrouted}, nil
})

func apiDocument(t *testing.T) *document {
	t.Helper()
	d, err := loadDocument()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// validateExchange fails the test when the request (unless invalid on
// purpose) or the answer does not match openapi.json.
func validateExchange(t *testing.T, req *http.Request, r *resp, invalid bool) {
	t.Helper()
	for _, err := range exchangeErrors(t.Context(), apiDocument(t), req, r, invalid) {
		t.Error(err)
	}
}

// exchangeErrors lists how the request (unless invalid on purpose) and the
// answer differ from the document. An undocumented status is a difference.
func exchangeErrors(ctx context.Context, d *document, req *http.Request, r *resp, invalid bool) []error {
	var errs []error
	route, params, err := d.router.FindRoute(req)
	switch {
	case err != nil && !invalid:
		errs = append(errs, fmt.Errorf("%s %s is not in openapi.json: %w", req.Method, req.URL.Path, err))
		route, params = d.unrouted, nil
	case err != nil:
		route, params = d.unrouted, nil
	case !invalid:
		in := &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: requestOptions,
		}
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			errs = append(errs, fmt.Errorf("request %s %s does not match openapi.json: %w", req.Method, req.URL.Path, err))
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.status,
		Header:                 r.header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	out.SetBodyBytes(r.body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		errs = append(errs, fmt.Errorf("answer %d to %s %s does not match openapi.json: %w\nbody: %s", r.status, req.Method, req.URL.Path, err, r.body))
	}
	return errs
}

// requestOptions validate a request as sent: without SkipSettingDefaults,
// kin-openapi writes a field's default over a null before validating, so a
// null where the document gives a default would pass.
var requestOptions = &openapi3filter.Options{AuthenticationFunc: bearerPresent, MultiError: true, SkipSettingDefaults: true}

// bearerPresent holds requests to the document's bearer scheme: the header is
// there with the scheme. Whether the key is good is the service's to say.
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if !strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
		return errors.New("no bearer token")
	}
	return nil
}

// paddedBody returns doc followed by spaces up to size bytes: still the same
// JSON value, of an exact size.
func paddedBody(doc string, size int) string {
	return doc + strings.Repeat(" ", size-len(doc))
}

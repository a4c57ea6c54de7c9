package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
)

const (
	shopKey    = "sk_test_51ShopKeyForHTTPTestsOnly"
	shopSecret = "whsec_ShopWebhookSecretForHTTPTests"
	shopAcct   = "acct_1HTTPShop"
)

// providerTimeout bounds the adapters' calls in these tests, standing for
// the 10 seconds of providers.Timeout.
const providerTimeout = 300 * time.Millisecond

// integrationEnv is an env whose Stripe adapter calls a loopback fake
// knowing shopKey and products prod_basic and prod_pro.
type integrationEnv struct {
	*testEnv
	shop *providertest.Stripe
	// integ is a connected Stripe integration of e.org, and product
	// desk-app a product of e.org.
	integ string
	key   string
}

func newIntegrationEnv(t *testing.T, o envOptions) *integrationEnv {
	t.Helper()
	shop := providertest.NewStripe(t, shopKey)
	shop.AccountID = shopAcct
	shop.AddProduct("prod_basic")
	shop.AddProduct("prod_pro")
	o.providers = map[providers.Name]providers.Provider{providers.Stripe: stripe.New(shop.URL(), providerTimeout)}
	e := &integrationEnv{testEnv: newTestEnvWith(t, o), shop: shop}
	e.integ = e.connect(t, e.org.ID, "Shop")
	e.addProduct(t, e.org.ID, "desk-app", "DESK")
	e.key = e.testEnv.key(t, e.org.ID, licentia.ScopeProviderRead, licentia.ScopeProviderWrite, licentia.ScopeAuditRead)
	return e
}

func (e *integrationEnv) connect(t *testing.T, orgID, name string) string {
	t.Helper()
	v, err := e.admin.ConnectIntegration(t.Context(), licentia.OperatorActor, orgID,
		admin.ConnectIntegration{Provider: "stripe", Name: name, APIKey: shopKey, WebhookSecret: shopSecret})
	if err != nil {
		t.Fatalf("ConnectIntegration() error = %v", err)
	}
	return v.Integration.ID
}

func (e *integrationEnv) addProduct(t *testing.T, orgID, id, prefix string) {
	t.Helper()
	name, major := "Product "+id, int64(1)
	if _, err := e.admin.CreateProduct(t.Context(), licentia.OperatorActor, orgID, admin.NewProduct{ID: &id, Name: &name, KeyPrefix: &prefix, CurrentMajor: &major}); err != nil {
		t.Fatalf("CreateProduct() error = %v", err)
	}
}

func mappingPath(integ, providerProduct string) string {
	return "/v1/admin/integrations/" + integ + "/mappings/" + providerProduct
}

// storedMappings counts an integration's stored mappings.
func (e *integrationEnv) storedMappings(t *testing.T, orgID, integ string) int {
	t.Helper()
	ms, err := e.store.Mappings(t.Context(), orgID, integ)
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}

// TestListIntegrations: the list holds the organization's connected
// integrations, oldest first, each with its webhook URL and never a
// credential.
func TestListIntegrations(t *testing.T) {
	e := newIntegrationEnv(t, envOptions{})
	e.clock.Advance(time.Second)
	second := e.connect(t, e.org.ID, "Second shop")
	gone := e.connect(t, e.org.ID, "Gone")
	if err := e.admin.DisconnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID, gone); err != nil {
		t.Fatal(err)
	}
	other := e.createOrg(t, "other", licentia.PlanBusiness)
	e.connect(t, other.ID, "Theirs")
	item := func(id, name, created string) string {
		return fmt.Sprintf(`{"id":%q,"provider":"stripe","name":%q,"account_id":%q,"livemode":false,
			"webhook_url":"%s/v1/providers/%s/webhooks","created_at":%q}`, id, name, shopAcct, testBaseURL, id, created)
	}
	e.run(t, scenario{
		call:       call{method: "GET", path: "/v1/admin/integrations", key: e.key},
		wantStatus: http.StatusOK,
		wantBody:   `{"integrations":[` + item(e.integ, "Shop", "2026-03-02T09:00:00.000Z") + `,` + item(second, "Second shop", "2026-03-02T09:00:01.000Z") + `]}`,
		notWant:    []string{shopKey, shopSecret, gone},
	})
	if strings.Contains(e.logs.String(), shopKey) || strings.Contains(e.logs.String(), shopSecret) {
		t.Error("a credential reached the log")
	}
}

// TestIntegrationWithoutBaseURL: without LICENTIA_BASE_URL the webhook URL
// cannot be known, and is null (docs/design.md).
func TestIntegrationWithoutBaseURL(t *testing.T) {
	e := newIntegrationEnv(t, envOptions{noBaseURL: true})
	r := e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/integrations", key: e.key}, wantStatus: http.StatusOK})
	var got struct {
		Integrations []map[string]any `json:"integrations"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Integrations) != 1 {
		t.Fatalf("integrations = %v, want 1", got.Integrations)
	}
	if v, ok := got.Integrations[0]["webhook_url"]; !ok || v != nil {
		t.Errorf("webhook_url = %v (present %v), want null", v, ok)
	}
}

// TestPutMapping: a PUT with only product_id takes every default; a second
// replaces every field, keeping created_at; the list is ordered by
// provider_product_id; the provider was asked with the stored key; each
// save is audited.
func TestPutMapping(t *testing.T) {
	e := newIntegrationEnv(t, envOptions{})
	e.run(t, scenario{
		call:       call{method: "PUT", path: mappingPath(e.integ, "prod_pro"), key: e.key, body: map[string]any{"product_id": "desk-app"}},
		wantStatus: http.StatusOK,
		wantBody: `{"mapping":{"integration_id":"` + e.integ + `","provider_product_id":"prod_pro","product_id":"desk-app",
			"limit_kind":"seats","limit_count":1,"key_valid_days":null,"on_refund":"revoke","on_subscription_end":"expire",
			"renewal_url":null,"send_key_mail":true,"features":[],"adds_to":null,"created_at":"2026-03-02T09:00:00.000Z","updated_at":"2026-03-02T09:00:00.000Z"}}`,
	})
	e.clock.Advance(time.Minute)
	full := map[string]any{"product_id": "desk-app", "limit_kind": "machines", "limit_count": 4294967295, "key_valid_days": 36500,
		"on_refund": "none", "on_subscription_end": "revoke", "renewal_url": "https://shop.example.com/renew", "send_key_mail": false}
	replaced := `{"integration_id":"` + e.integ + `","provider_product_id":"prod_pro","product_id":"desk-app",
		"limit_kind":"machines","limit_count":4294967295,"key_valid_days":36500,"on_refund":"none","on_subscription_end":"revoke",
		"renewal_url":"https://shop.example.com/renew","send_key_mail":false,"features":[],"adds_to":null,"created_at":"2026-03-02T09:00:00.000Z","updated_at":"2026-03-02T09:01:00.000Z"}`
	e.run(t, scenario{call: call{method: "PUT", path: mappingPath(e.integ, "prod_pro"), key: e.key, body: full},
		wantStatus: http.StatusOK, wantBody: `{"mapping":` + replaced + `}`})
	nulls := map[string]any{"product_id": "desk-app", "key_valid_days": nil, "renewal_url": nil}
	r := e.run(t, scenario{call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: e.key, body: nulls}, wantStatus: http.StatusOK})
	var basic struct {
		Mapping json.RawMessage `json:"mapping"`
	}
	if err := json.Unmarshal(r.body, &basic); err != nil {
		t.Fatal(err)
	}
	e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/integrations/" + e.integ + "/mappings", key: e.key},
		wantStatus: http.StatusOK, wantBody: `{"mappings":[` + string(basic.Mapping) + `,` + replaced + `]}`})

	wantCalls := []string{"GET /v1/account", "GET /v1/products/prod_pro", "GET /v1/products/prod_pro", "GET /v1/products/prod_basic"}
	if diff := cmp.Diff(wantCalls, e.shop.Requests()); diff != "" {
		t.Errorf("provider calls mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{shopKey, shopKey, shopKey, shopKey}, e.shop.Keys()); diff != "" {
		t.Errorf("provider call keys mismatch (-want +got):\n%s", diff)
	}
	audit, err := e.store.OrganizationAudit(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	saved := 0
	for _, a := range audit {
		if a.Action == licentia.AuditMappingSaved {
			saved++
		}
	}
	if saved != 3 {
		t.Errorf("mapping.saved audit entries = %d, want 3", saved)
	}
}

// TestPutMappingRefused walks the order of checks: 400, 404
// integration_not_found (unknown, another organization's, disconnected),
// 404 product_not_found, then the provider's answers. The provider is
// asked only once the request is valid and both found, and nothing is
// saved on any error.
func TestPutMappingRefused(t *testing.T) {
	e := newIntegrationEnv(t, envOptions{})
	other := e.createOrg(t, "other", licentia.PlanBusiness)
	theirs := e.connect(t, other.ID, "Theirs")
	e.addProduct(t, other.ID, "their-app", "THEIR")
	gone := e.connect(t, e.org.ID, "Gone")
	if err := e.admin.DisconnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID, gone); err != nil {
		t.Fatal(err)
	}
	issues := func(pairs ...string) map[string]any {
		var is []any
		for i := 0; i < len(pairs); i += 2 {
			is = append(is, map[string]any{"path": pairs[i], "message": pairs[i+1]})
		}
		return map[string]any{"issues": is}
	}
	body := map[string]any{"product_id": "desk-app"}
	for _, tt := range []struct {
		scenario
		outcome providertest.Outcome
		calls   int
	}{
		{scenario: scenario{name: "every body problem, unknown integration", call: call{method: "PUT", path: mappingPath(someID, "prod.x"), key: e.key,
			body: map[string]any{"limit_kind": "floating", "limit_count": 0, "key_valid_days": 36501, "on_refund": "refund",
				"on_subscription_end": "keep", "renewal_url": strings.Repeat("u", 2049)}, invalid: true},
			wantStatus: 400, wantCode: licentia.CodeValidationFailed, wantDetails: issues(
				"path.providerProductId", "must be 1 to 100 of A-Z a-z 0-9 _ -",
				"/product_id", "is required", "/limit_count", "must be an integer from 1 to 4294967295",
				"/key_valid_days", "must be an integer from 1 to 36500", "/limit_kind", "must be seats or machines",
				"/on_refund", "must be revoke or none", "/on_subscription_end", "must be expire or revoke",
				"/renewal_url", "must be at most 2048 characters without control characters")}},
		{scenario: scenario{name: "types", call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: e.key,
			body: map[string]any{"product_id": 7, "limit_count": "1", "key_valid_days": 1.5}, invalid: true},
			wantStatus: 400, wantCode: licentia.CodeValidationFailed, wantDetails: issues(
				"/product_id", "must be a string", "/limit_count", "must be an integer", "/key_valid_days", "must be an integer")}},
		{scenario: scenario{name: "unknown integration", call: call{method: "PUT", path: mappingPath(someID, "prod_basic"), key: e.key, body: map[string]any{"product_id": "no-such-app"}},
			wantStatus: 404, wantCode: licentia.CodeIntegrationNotFound}},
		{scenario: scenario{name: "another organization's integration", call: call{method: "PUT", path: mappingPath(theirs, "prod_basic"), key: e.key, body: map[string]any{"product_id": "no-such-app"}},
			wantStatus: 404, wantCode: licentia.CodeIntegrationNotFound}},
		{scenario: scenario{name: "disconnected integration", call: call{method: "PUT", path: mappingPath(gone, "prod_basic"), key: e.key, body: body},
			wantStatus: 404, wantCode: licentia.CodeIntegrationNotFound}},
		{scenario: scenario{name: "unknown product", call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: e.key, body: map[string]any{"product_id": "no-such-app"}},
			wantStatus: 404, wantCode: licentia.CodeProductNotFound}},
		{scenario: scenario{name: "another organization's product", call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: e.key, body: map[string]any{"product_id": "their-app"}},
			wantStatus: 404, wantCode: licentia.CodeProductNotFound}},
		{scenario: scenario{name: "provider knows no such product", call: call{method: "PUT", path: mappingPath(e.integ, "prod_gone"), key: e.key, body: body},
			wantStatus: 400, wantCode: licentia.CodeValidationFailed, wantDetails: issues("path.providerProductId", "is not a product of the provider account")},
			calls: 1},
		{scenario: scenario{name: "key without permission", call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: e.key, body: body},
			wantStatus: 422, wantCode: licentia.CodeProviderTokenInvalid, wantDetails: map[string]any{"reason": "permission_denied"}},
			outcome: providertest.PermissionDenied, calls: 1},
		{scenario: scenario{name: "key refused", call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: e.key, body: body},
			wantStatus: 422, wantCode: licentia.CodeProviderTokenInvalid, wantDetails: map[string]any{"reason": "token_refused"}},
			outcome: providertest.TokenRefused, calls: 1},
		{scenario: scenario{name: "provider answers 500", call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: e.key, body: body},
			wantStatus: 502, wantCode: licentia.CodeProviderUnavailable},
			outcome: providertest.ServerError, calls: 1},
		{scenario: scenario{name: "provider silent past the timeout", call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: e.key, body: body},
			wantStatus: 502, wantCode: licentia.CodeProviderUnavailable},
			outcome: providertest.Hang, calls: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.shop.SetOutcome(tt.outcome)
			before := len(e.shop.Requests())
			r := e.run(t, tt.scenario)
			if got := len(e.shop.Requests()) - before; got != tt.calls {
				t.Errorf("provider calls = %d, want %d", got, tt.calls)
			}
			if n := e.storedMappings(t, e.org.ID, e.integ) + e.storedMappings(t, other.ID, theirs) + e.storedMappings(t, e.org.ID, gone); n != 0 {
				t.Errorf("stored mappings = %d, want none", n)
			}
			for _, s := range []string{shopKey, shopSecret} {
				if strings.Contains(string(r.body), s) || strings.Contains(e.logs.String(), s) {
					t.Error("a credential reached the answer or the log")
				}
			}
		})
	}
	// Another organization's integration answers exactly as a missing one.
	missing := e.send(t, call{method: "PUT", path: mappingPath(someID, "prod_basic"), key: e.key, body: body}).apiError(t)
	their := e.send(t, call{method: "PUT", path: mappingPath(theirs, "prod_basic"), key: e.key, body: body}).apiError(t)
	if missing.Code != their.Code || missing.Message != their.Message {
		t.Errorf("another organization's integration = %+v, a missing one %+v", their, missing)
	}
}

// TestDeleteMapping: 204 once, then 404 mapping_not_found; an unknown,
// another organization's or disconnected integration answers 404
// integration_not_found; another organization's mapping stays.
func TestDeleteMapping(t *testing.T) {
	e := newIntegrationEnv(t, envOptions{})
	other := e.createOrg(t, "other", licentia.PlanBusiness)
	theirs := e.connect(t, other.ID, "Theirs")
	e.addProduct(t, other.ID, "their-app", "THEIR")
	product := "their-app"
	if _, err := e.admin.PutMapping(t.Context(), licentia.OperatorActor, other.ID, theirs, "prod_basic", admin.PutMapping{ProductID: &product}); err != nil {
		t.Fatal(err)
	}
	e.run(t, scenario{call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: e.key, body: map[string]any{"product_id": "desk-app"}}, wantStatus: 200})
	for _, tt := range []scenario{
		{name: "another organization's", call: call{method: "DELETE", path: mappingPath(theirs, "prod_basic"), key: e.key}, wantStatus: 404, wantCode: licentia.CodeIntegrationNotFound},
		{name: "unknown integration", call: call{method: "DELETE", path: mappingPath(someID, "prod_basic"), key: e.key}, wantStatus: 404, wantCode: licentia.CodeIntegrationNotFound},
		{name: "deleted", call: call{method: "DELETE", path: mappingPath(e.integ, "prod_basic"), key: e.key}, wantStatus: 204},
		{name: "again", call: call{method: "DELETE", path: mappingPath(e.integ, "prod_basic"), key: e.key}, wantStatus: 404, wantCode: licentia.CodeMappingNotFound},
		{name: "never mapped", call: call{method: "DELETE", path: mappingPath(e.integ, "prod_pro"), key: e.key}, wantStatus: 404, wantCode: licentia.CodeMappingNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
	if n := e.storedMappings(t, other.ID, theirs); n != 1 {
		t.Errorf("their mappings = %d, want 1", n)
	}
	if err := e.admin.DisconnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID, e.integ); err != nil {
		t.Fatal(err)
	}
	e.run(t, scenario{call: call{method: "DELETE", path: mappingPath(e.integ, "prod_basic"), key: e.key}, wantStatus: 404, wantCode: licentia.CodeIntegrationNotFound})
	e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/integrations/" + e.integ + "/mappings", key: e.key}, wantStatus: 404, wantCode: licentia.CodeIntegrationNotFound})
	audit, err := e.store.OrganizationAudit(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range audit {
		actions = append(actions, a.Action)
	}
	want := []string{licentia.AuditMappingSaved, licentia.AuditMappingDeleted, licentia.AuditIntegrationDisconnected}
	if got := actions[len(actions)-len(want):]; !cmp.Equal(want, got) {
		t.Errorf("last audit actions = %v, want %v", got, want)
	}
}

// TestNoRouteConnects: no administration route, whatever a key's scopes,
// connects, checks or disconnects an integration or sets its webhook
// secret; the operator's commands do.
func TestNoRouteConnects(t *testing.T) {
	e := newIntegrationEnv(t, envOptions{})
	all := e.testEnv.key(t, e.org.ID, keyScopes()...)
	connect := map[string]any{"provider": "stripe", "name": "Other", "api_key": shopKey, "webhook_secret": shopSecret}
	for _, c := range []call{
		{method: "POST", path: "/v1/admin/integrations", body: connect},
		{method: "PUT", path: "/v1/admin/integrations/" + e.integ, body: connect},
		{method: "DELETE", path: "/v1/admin/integrations/" + e.integ},
		{method: "POST", path: "/v1/admin/integrations/" + e.integ + "/check"},
		{method: "PUT", path: "/v1/admin/integrations/" + e.integ + "/webhook_secret", body: map[string]any{"webhook_secret": "whsec_new"}},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			c.key, c.invalid = all, true
			r := e.send(t, c)
			if r.status != http.StatusNotFound && r.status != http.StatusMethodNotAllowed {
				t.Errorf("status = %d, want 404 or 405", r.status)
			}
		})
	}
	vs, err := e.admin.Integrations(t.Context(), e.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Integration.ID != e.integ {
		t.Errorf("integrations = %+v, want only %s, still connected", vs, e.integ)
	}
}

// TestIntegrationScopes: reading needs provider:read, changing mappings
// provider:write; neither grants the other.
func TestIntegrationScopes(t *testing.T) {
	e := newIntegrationEnv(t, envOptions{})
	read := e.testEnv.key(t, e.org.ID, licentia.ScopeProviderRead)
	write := e.testEnv.key(t, e.org.ID, licentia.ScopeProviderWrite)
	missing := func(s licentia.Scope) map[string]any { return map[string]any{"missing": []any{string(s)}} }
	for _, tt := range []scenario{
		{name: "list with write", call: call{method: "GET", path: "/v1/admin/integrations", key: write}, wantStatus: 403, wantCode: licentia.CodeInsufficientScope, wantDetails: missing(licentia.ScopeProviderRead)},
		{name: "put with read", call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: read, body: map[string]any{"product_id": "desk-app"}},
			wantStatus: 403, wantCode: licentia.CodeInsufficientScope, wantDetails: missing(licentia.ScopeProviderWrite)},
		{name: "delete with read", call: call{method: "DELETE", path: mappingPath(e.integ, "prod_basic"), key: read}, wantStatus: 403, wantCode: licentia.CodeInsufficientScope, wantDetails: missing(licentia.ScopeProviderWrite)},
		{name: "put with write", call: call{method: "PUT", path: mappingPath(e.integ, "prod_basic"), key: write, body: map[string]any{"product_id": "desk-app"}}, wantStatus: 200},
		{name: "mappings with read", call: call{method: "GET", path: "/v1/admin/integrations/" + e.integ + "/mappings", key: read}, wantStatus: 200},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
}

// TestPutMappingPaddleAndLemonSqueezy: a mapping of a Paddle or Lemon
// Squeezy integration is saved once the provider, through its adapter,
// knows the product (a Paddle product, a Lemon Squeezy variant), with the
// stored key; a key the provider refuses saves nothing.
func TestPutMappingPaddleAndLemonSqueezy(t *testing.T) {
	paddleKey := "pdl_sdbx_apikey_01httpshop0000000000000000_q6TGTJyvoIz7LDtXT65bX7_AQO"
	paddleFake := providertest.NewPaddle(t, paddleKey)
	paddleFake.AddProduct("pro_01httpdesk")
	lemonKey := "ls_test_key_for_http_tests_only"
	lemonFake := providertest.NewLemonSqueezy(t, lemonKey)
	lemonFake.AddVariant("4242", false)
	for _, tt := range []struct {
		provider providers.Name
		fake     interface {
			URL() string
			SetOutcome(providertest.Outcome)
			Requests() []string
			Keys() []string
		}
		adapter         providers.Provider
		key, product    string
		account, lookup string
	}{
		{providers.Paddle, paddleFake, paddle.New(paddleFake.URL(), providerTimeout), paddleKey, "pro_01httpdesk",
			"GET /event-types", "GET /products/pro_01httpdesk"},
		{providers.LemonSqueezy, lemonFake, lemonsqueezy.New(lemonFake.URL(), providerTimeout), lemonKey, "4242",
			"GET /v1/users/me", "GET /v1/variants/4242"},
	} {
		t.Run(string(tt.provider), func(t *testing.T) {
			e := &integrationEnv{testEnv: newTestEnvWith(t, envOptions{providers: map[providers.Name]providers.Provider{tt.provider: tt.adapter}})}
			v, err := e.admin.ConnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID,
				admin.ConnectIntegration{Provider: string(tt.provider), Name: "Shop", APIKey: providers.Secret(tt.key), WebhookSecret: shopSecret})
			if err != nil {
				t.Fatalf("ConnectIntegration() error = %v", err)
			}
			integ := v.Integration.ID
			e.addProduct(t, e.org.ID, "desk-app", "DESK")
			key := e.testEnv.key(t, e.org.ID, licentia.ScopeProviderRead, licentia.ScopeProviderWrite)
			e.run(t, scenario{
				call:       call{method: "PUT", path: mappingPath(integ, tt.product), key: key, body: map[string]any{"product_id": "desk-app"}},
				wantStatus: http.StatusOK,
				wantBody: `{"mapping":{"integration_id":"` + integ + `","provider_product_id":"` + tt.product + `","product_id":"desk-app",
					"limit_kind":"seats","limit_count":1,"key_valid_days":null,"on_refund":"revoke","on_subscription_end":"expire",
					"renewal_url":null,"send_key_mail":true,"features":[],"adds_to":null,"created_at":"2026-03-02T09:00:00.000Z","updated_at":"2026-03-02T09:00:00.000Z"}}`,
			})
			if diff := cmp.Diff([]string{tt.account, tt.lookup}, tt.fake.Requests()); diff != "" {
				t.Errorf("provider calls mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tt.key, tt.key}, tt.fake.Keys()); diff != "" {
				t.Errorf("provider call keys mismatch (-want +got):\n%s", diff)
			}

			tt.fake.SetOutcome(providertest.TokenRefused)
			e.run(t, scenario{
				call:       call{method: "PUT", path: mappingPath(integ, tt.product), key: key, body: map[string]any{"product_id": "desk-app", "limit_count": 5}},
				wantStatus: http.StatusUnprocessableEntity, wantCode: licentia.CodeProviderTokenInvalid,
				wantDetails: map[string]any{"reason": "token_refused"}, notWant: []string{tt.key},
			})
			if got := len(tt.fake.Requests()); got != 3 {
				t.Errorf("provider calls = %d, want 3", got)
			}
			ms, err := e.store.Mappings(t.Context(), e.org.ID, integ)
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != 1 || ms[0].LimitCount != 1 {
				t.Errorf("stored mappings = %+v, want the first save only", ms)
			}
			if strings.Contains(e.logs.String(), tt.key) {
				t.Error("the key reached the log")
			}
		})
	}
}

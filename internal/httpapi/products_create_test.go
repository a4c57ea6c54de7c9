package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// TestCreateProductConflict: product ids and key prefixes are global. One
// another product holds, in any organization and whatever the prefix's
// case, answers 409 conflict without naming the holder.
func TestCreateProductConflict(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
	other := e.createOrg(t, "globex", licentia.PlanBusiness)
	e.createProduct(t, e.key(t, other.ID, licentia.ScopeProductsWrite),
		map[string]any{"id": "globex-desk", "name": "Globex Secret Desk", "key_prefix": "GLBX", "current_major": 1})
	e.createProduct(t, key, productBody("acme-desk", "ACME", nil))

	// Nothing of the holder may show: its organization, its product.
	notWant := []string{other.ID, "globex", "Globex", "Secret", "GLBX"}
	for _, tt := range []struct {
		name string
		body map[string]any
	}{
		{"another organization's id", productBody("globex-desk", "NEWA", nil)},
		{"another organization's prefix", productBody("new-b", "GLBX", nil)},
		{"another organization's prefix in lower case", productBody("new-c", "glbx", nil)},
		{"another organization's prefix in mixed case", productBody("new-d", "GlBx", nil)},
		{"own id", productBody("acme-desk", "NEWE", nil)},
		{"own prefix in lower case", productBody("new-f", "acme", nil)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(t, scenario{call: createCall(key, tt.body), wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict, notWant: notWant})
			if msg := r.apiError(t).Message; msg == "" {
				t.Errorf("conflict without a message")
			}
		})
	}
	if n := e.productCount(t, e.org.ID); n != 1 {
		t.Errorf("acme has %d products, want 1: a refused creation writes nothing", n)
	}
}

// TestCreateProductReserved: a reserved word, or an id or prefix any
// product ever held, answers 409 product_reserved naming the field.
func TestCreateProductReserved(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
	field := func(f string) map[string]any { return map[string]any{"field": f} }
	for _, tt := range []struct {
		name, id, prefix, field string
	}{
		{"id admin", "admin", "NEWA", "id"},
		{"id api", "api", "NEWA", "id"},
		{"id www", "www", "NEWA", "id"},
		{"id licentia", "licentia", "NEWA", "id"},
		{"prefix API", "new-app", "API", "key_prefix"},
		{"prefix WWW", "new-app", "WWW", "key_prefix"},
		{"prefix api in lower case", "new-app", "api", "key_prefix"},
		{"prefix ADMIN", "new-app", "ADMIN", "key_prefix"},
		{"id named before the prefix", "www", "API", "id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.run(t, scenario{
				call:       createCall(key, productBody(tt.id, tt.prefix, nil)),
				wantStatus: http.StatusConflict, wantCode: licentia.CodeProductReserved, wantDetails: field(tt.field),
			})
		})
	}

	// Ids and prefixes are never reused, by anyone, after their product is gone.
	e.createProduct(t, key, productBody("old-app", "OLDA", nil))
	e.deleteProduct(t, e.org.ID, "old-app")
	other := e.createOrg(t, "globex", licentia.PlanBusiness)
	otherKey := e.key(t, other.ID, licentia.ScopeProductsWrite)
	for _, tt := range []struct {
		name, key, id, prefix, field string
	}{
		{"id used before", key, "old-app", "NEWB", "id"},
		{"prefix used before", key, "new-app", "OLDA", "key_prefix"},
		{"prefix used before, in lower case", key, "new-app", "olda", "key_prefix"},
		{"id used before by another organization", otherKey, "old-app", "NEWC", "id"},
		{"prefix used before by another organization", otherKey, "new-app", "OLDA", "key_prefix"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.run(t, scenario{
				call:       createCall(tt.key, productBody(tt.id, tt.prefix, nil)),
				wantStatus: http.StatusConflict, wantCode: licentia.CodeProductReserved, wantDetails: field(tt.field),
			})
		})
	}
	if n := e.productCount(t, e.org.ID) + e.productCount(t, other.ID); n != 0 {
		t.Errorf("%d products written, want none", n)
	}
}

// TestCreateProductPlanLimit: every product counts against the plan; a
// full plan answers 402 with plan, resource, limit and count, and writes
// nothing.
func TestCreateProductPlanLimit(t *testing.T) {
	e := newTestEnv(t)
	free := e.createOrg(t, "tiny", licentia.PlanFree)
	key := e.key(t, free.ID, licentia.ScopeProductsWrite)
	e.createProduct(t, key, productBody("tiny-one", "TINY", nil))
	e.clock.Advance(48 * time.Hour)
	e.run(t, scenario{
		call:       createCall(key, productBody("tiny-two", "TINYB", nil)),
		wantStatus: http.StatusPaymentRequired, wantCode: licentia.CodePlanLimitReached,
		wantDetails: map[string]any{"plan": "free", "resource": "products", "limit": 1.0, "count": 1.0},
	})
	if n := e.productCount(t, free.ID); n != 1 {
		t.Errorf("tiny has %d products, want 1", n)
	}
	// The refused id and prefix stay free for anyone.
	e.createProduct(t, e.key(t, e.org.ID, licentia.ScopeProductsWrite), productBody("tiny-two", "TINYB", nil))
}

// TestCreateProductDailyCap: at most 5 new products per organization in a
// rolling 24 hours. The 6th answers 429 rate_limited with no Retry-After
// header of any kind and writes nothing; the cap is per organization.
func TestCreateProductDailyCap(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
	create := func(i int) call {
		return createCall(key, productBody(fmt.Sprintf("app-%d", i), fmt.Sprintf("APP%c", 'A'+i), nil))
	}
	capped := func(t *testing.T, i int) {
		t.Helper()
		r := e.run(t, scenario{call: create(i), wantStatus: http.StatusTooManyRequests, wantCode: licentia.CodeRateLimited})
		for _, h := range []string{"Retry-After", "Retry-After-admin"} {
			if got := r.header.Values(h); got != nil {
				t.Errorf("%s = %q on the daily cap, want none", h, got)
			}
		}
	}
	for i := range 5 {
		e.clock.Set(start.Add(time.Duration(i) * time.Hour))
		e.run(t, scenario{call: create(i), wantStatus: http.StatusCreated})
	}
	e.clock.Set(start.Add(5 * time.Hour))
	capped(t, 5)
	if n := e.productCount(t, e.org.ID); n != 5 {
		t.Errorf("%d products after the cap, want 5", n)
	}
	t.Run("another organization", func(t *testing.T) {
		other := e.createOrg(t, "globex", licentia.PlanBusiness)
		e.createProduct(t, e.key(t, other.ID, licentia.ScopeProductsWrite), productBody("globex-app", "GLBX", nil))
	})
	t.Run("1 ms before the first leaves the window", func(t *testing.T) {
		e.clock.Set(start.Add(24*time.Hour - time.Millisecond))
		capped(t, 5)
	})
	t.Run("24 hours after the first", func(t *testing.T) {
		e.clock.Set(start.Add(24 * time.Hour))
		e.run(t, scenario{call: create(5), wantStatus: http.StatusCreated})
		capped(t, 6)
	})
	t.Run("24 hours after the second", func(t *testing.T) {
		e.clock.Set(start.Add(25 * time.Hour))
		e.run(t, scenario{call: create(6), wantStatus: http.StatusCreated})
	})
}

// TestCreateProductAdminRateLimit: the admin rate limit's 429 on creation
// carries Retry-After-admin, unlike the daily cap's.
func TestCreateProductAdminRateLimit(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
	c := call{method: "POST", path: "/v1/admin/products", key: key, body: "{}", invalid: true}
	e.repeat(t, 300, c, http.StatusBadRequest)
	wantRateLimited(t, e, c, "60")
}

// TestCreateProductWithoutMasterKey: without a master key no signing key
// can be made: 503 signing_keys_not_configured, nothing written; the body
// is still checked first, and reads still work.
func TestCreateProductWithoutMasterKey(t *testing.T) {
	e := newTestEnvWith(t, envOptions{noMasterKey: true})
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite, licentia.ScopeProductsRead)
	for _, tt := range []scenario{
		{
			name:       "valid body",
			call:       createCall(key, productBody("desk-app", "DESK", nil)),
			wantStatus: http.StatusServiceUnavailable, wantCode: licentia.CodeSigningKeysNotConfigured,
		},
		{
			name:       "400 first",
			call:       call{method: "POST", path: "/v1/admin/products", key: key, body: productBody("desk-app", "DE", map[string]any{"name": ""}), invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/name", "must be 1 to 200 characters"),
		},
		{
			name:       "409 first",
			call:       createCall(key, productBody("admin", "DESK", nil)),
			wantStatus: http.StatusConflict, wantCode: licentia.CodeProductReserved, wantDetails: map[string]any{"field": "id"},
		},
		{
			name:       "reads work",
			call:       call{method: "GET", path: "/v1/admin/products", key: key},
			wantStatus: http.StatusOK, wantBody: `{"products":[]}`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
	if a := productAudit(t, e, e.org.ID); len(a) != 0 {
		t.Errorf("audit entries %v, want none", a)
	}
}

// TestCreateProductOrderOfChecks: after the body, 409 before 402 before the
// daily cap's 429 before 503. A second server without a master key shares
// the database, so it can hold products made by the first.
func TestCreateProductOrderOfChecks(t *testing.T) {
	e := newTestEnv(t)
	noKeys := newTestEnvWith(t, envOptions{shareStore: e, noMasterKey: true})
	writer := func(slug string, plan licentia.PlanID, products int) string {
		o := e.createOrg(t, slug, plan)
		key := e.key(t, o.ID, licentia.ScopeProductsWrite)
		for i := range products {
			e.createProduct(t, key, productBody(fmt.Sprintf("%s-%d", slug, i), fmt.Sprintf("%sP%c", slug[:2], 'A'+i), nil))
		}
		return key
	}
	acme := e.key(t, e.org.ID, licentia.ScopeProductsWrite, licentia.ScopeProductsRead)
	e.createProduct(t, acme, productBody("taken-app", "TAKEN", nil))
	full := writer("fu", licentia.PlanFree, 1)        // plan full, under the cap
	fullCapped := writer("fc", licentia.PlanIndie, 5) // plan full and at the cap
	capped := writer("ca", licentia.PlanBusiness, 5)  // at the cap, room in the plan
	readOnly := e.key(t, e.org.ID, licentia.ScopeProductsRead)

	fresh := productBody("fresh-app", "FRESH", nil)
	taken := productBody("taken-app", "FRESH", nil)
	invalid := productBody("taken-app", "FRESH", map[string]any{"current_major": 0})
	big := paddedBody(`{"id":"x"}`, 65537)
	plan := func(p licentia.PlanID, limit float64) map[string]any {
		return map[string]any{"plan": string(p), "resource": "products", "limit": limit, "count": limit}
	}
	for _, tt := range []scenario{
		{
			name:       "403 before 413",
			call:       call{method: "POST", path: "/v1/admin/products", key: readOnly, body: big, invalid: true},
			wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"products:write"}},
		},
		{
			name:       "413 before 400",
			call:       call{method: "POST", path: "/v1/admin/products?x=1", key: acme, body: big, invalid: true},
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge,
		},
		{
			name:       "400 before 409",
			call:       call{method: "POST", path: "/v1/admin/products", key: capped, body: invalid, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("/current_major", "must be an integer from 1 to 65535"),
		},
		{
			name:       "409 before 402",
			call:       createCall(full, taken),
			wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict,
		},
		{
			name:       "409 product_reserved before 402",
			call:       createCall(fullCapped, productBody("api", "FRESH", nil)),
			wantStatus: http.StatusConflict, wantCode: licentia.CodeProductReserved, wantDetails: map[string]any{"field": "id"},
		},
		{
			name:       "409 before the daily cap",
			call:       createCall(capped, taken),
			wantStatus: http.StatusConflict, wantCode: licentia.CodeConflict,
		},
		{
			name:       "402 before the daily cap",
			call:       createCall(fullCapped, fresh),
			wantStatus: http.StatusPaymentRequired, wantCode: licentia.CodePlanLimitReached, wantDetails: plan(licentia.PlanIndie, 5),
		},
		{
			name:       "402 before 503",
			call:       createCall(full, fresh),
			wantStatus: http.StatusPaymentRequired, wantCode: licentia.CodePlanLimitReached, wantDetails: plan(licentia.PlanFree, 1),
		},
		{
			name:       "daily cap before 503",
			call:       createCall(capped, fresh),
			wantStatus: http.StatusTooManyRequests, wantCode: licentia.CodeRateLimited,
		},
		{
			name:       "503 last",
			call:       createCall(acme, fresh),
			wantStatus: http.StatusServiceUnavailable, wantCode: licentia.CodeSigningKeysNotConfigured,
		},
	} {
		t.Run(tt.name, func(t *testing.T) { noKeys.run(t, tt) })
	}
}

// TestProductBodySize: 64 KB is 65,536 bytes on every product route that
// takes a body; one byte more answers 413 before the body is looked at.
func TestProductBodySize(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
	e.run(t, scenario{
		call:       createCall(key, paddedBody(`{"id":"desk-app","name":"Desk","key_prefix":"DESK","current_major":1}`, 65536)),
		wantStatus: http.StatusCreated,
	})
	for _, tt := range []struct {
		method, path, body string
	}{
		{"POST", "/v1/admin/products", `{"id":"desk-two","name":"Desk","key_prefix":"DESKB","current_major":1}`},
		{"PATCH", productPath("desk-app", ""), `{"name":"Desk 2"}`},
		{"POST", productPath("desk-app", "rotate-signing-key"), `{"keep_previous":true}`},
		{"POST", productPath("desk-app", "retire-public-key"), `{"public_key":"` + fmt.Sprintf("%064d", 0) + `"}`},
		{"PATCH", productPath("missing", ""), `{"name":"Desk 2"}`},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			e.run(t, scenario{
				call:       call{method: tt.method, path: tt.path, key: key, body: paddedBody(tt.body, 65537), invalid: true},
				wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge,
			})
		})
	}
	if n := e.productCount(t, e.org.ID); n != 1 {
		t.Errorf("%d products, want 1", n)
	}
}

// brokenProducts is a store whose product writes fail as they would with
// the database gone.
type brokenProducts struct{ store.Store }

func (s brokenProducts) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(brokenProductsTx{tx}) })
}

type brokenProductsTx struct{ store.Tx }

var errDiskGone = errors.New("disk I/O error at /var/lib/licentia/licentia.db")

func (brokenProductsTx) CreateProduct(context.Context, *licentia.Product) error { return errDiskGone }
func (brokenProductsTx) UpdateProduct(context.Context, *licentia.Product) error { return errDiskGone }

// TestProductDependencyDown: a dependency down while creating a product
// answers 503 service_unavailable (contract); elsewhere it is 500
// internal_error. Neither shows the cause, which is logged with the
// request id.
func TestProductDependencyDown(t *testing.T) {
	e := newTestEnvWith(t, envOptions{wrapStore: func(s store.Store) store.Store { return brokenProducts{s} }})
	key := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
	seed := newTestEnvWith(t, envOptions{shareStore: e})
	seed.createProduct(t, key, productBody("desk-app", "DESK", nil))
	for _, tt := range []scenario{
		{
			name:       "create",
			call:       createCall(key, productBody("desk-two", "DESKB", nil)),
			wantStatus: http.StatusServiceUnavailable, wantCode: licentia.CodeServiceUnavailable,
		},
		{
			name:       "patch",
			call:       call{method: "PATCH", path: productPath("desk-app", ""), key: key, body: map[string]any{"name": "Desk 2"}},
			wantStatus: http.StatusInternalServerError, wantCode: licentia.CodeInternal,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.notWant = []string{"disk", "/var/lib"}
			r := e.run(t, tt)
			line := `"request_id":"` + r.header.Get("X-Request-Id") + `"`
			if logs := e.logs.String(); !strings.Contains(logs, line) || !strings.Contains(logs, errDiskGone.Error()) {
				t.Errorf("no log line with the cause and %s:\n%s", line, logs)
			}
		})
	}
	if n := e.productCount(t, e.org.ID); n != 1 {
		t.Errorf("%d products, want 1", n)
	}
}

// TestProductWrongMethod: no route deletes or replaces a product; their
// paths answer 405 with Allow.
func TestProductWrongMethod(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, keyScopes()...)
	for _, tt := range []struct{ method, path, allow string }{
		{"DELETE", productPath("desk-app", ""), "GET, HEAD, PATCH"},
		{"PUT", productPath("desk-app", ""), "GET, HEAD, PATCH"},
		{"DELETE", "/v1/admin/products", "GET, HEAD, POST"},
		{"GET", productPath("desk-app", "rotate-signing-key"), "POST"},
		{"GET", productPath("desk-app", "retire-public-key"), "POST"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := e.run(t, scenario{call: call{method: tt.method, path: tt.path, key: key, invalid: true}, wantStatus: http.StatusMethodNotAllowed, wantCode: licentia.CodeMethodNotAllowed})
			if got := r.header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
		})
	}
}

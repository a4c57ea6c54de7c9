package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
)

// TestListProducts: the caller's products, oldest first, and never another
// organization's.
func TestListProducts(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsRead, licentia.ScopeProductsWrite)
	list := call{method: "GET", path: "/v1/admin/products", key: key}
	e.run(t, scenario{call: list, wantStatus: http.StatusOK, wantBody: `{"products":[]}`})

	other := e.createOrg(t, "globex", licentia.PlanBusiness)
	otherKey := e.key(t, other.ID, licentia.ScopeProductsRead, licentia.ScopeProductsWrite)
	// Ids run against time, so the order can only come from created_at.
	zed := e.createProduct(t, key, productBody("zed-app", "ZED", nil))
	e.clock.Advance(time.Minute)
	theirs := e.createProduct(t, otherKey, productBody("globex-app", "GLBX", nil))
	e.clock.Advance(time.Minute)
	abc := e.createProduct(t, key, productBody("abc-app", "ABC", map[string]any{"machines_per_seat": 7}))

	got := e.run(t, scenario{call: list, wantStatus: http.StatusOK}).products(t)
	if diff := cmp.Diff([]productView{zed, abc}, got); diff != "" {
		t.Errorf("acme's products mismatch (-want +got):\n%s", diff)
	}
	got = e.run(t, scenario{call: call{method: "GET", path: "/v1/admin/products", key: otherKey}, wantStatus: http.StatusOK}).products(t)
	if diff := cmp.Diff([]productView{theirs}, got); diff != "" {
		t.Errorf("globex's products mismatch (-want +got):\n%s", diff)
	}
	e.run(t, scenario{
		call:       call{method: "GET", path: "/v1/admin/products?limit=10", key: key, invalid: true},
		wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.limit", "unknown parameter"),
	})
}

// TestProductNotFound: on every route naming a product, another
// organization's product answers exactly like a missing one, and is left
// unchanged.
func TestProductNotFound(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsRead, licentia.ScopeProductsWrite)
	other := e.createOrg(t, "globex", licentia.PlanBusiness)
	otherKey := e.key(t, other.ID, licentia.ScopeProductsRead, licentia.ScopeProductsWrite)
	theirs := e.createProduct(t, otherKey, productBody("globex-app", "GLBX", nil))

	for _, tt := range []struct {
		method, action string
		body           any
	}{
		{"GET", "", nil},
		{"PATCH", "", map[string]any{"name": "Mine now"}},
		{"POST", "rotate-signing-key", nil},
		{"POST", "rotate-signing-key", map[string]any{"keep_previous": false}},
		{"POST", "retire-public-key", map[string]any{"public_key": theirs.PublicKey}},
	} {
		t.Run(tt.method+" "+tt.action, func(t *testing.T) {
			var answers []apiError
			for _, id := range []string{"globex-app", "missing-app"} {
				r := e.run(t, scenario{
					call:       call{method: tt.method, path: productPath(id, tt.action), key: key, body: tt.body},
					wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound,
				})
				a := r.apiError(t)
				a.RequestID = ""
				answers = append(answers, a)
			}
			if diff := cmp.Diff(answers[1], answers[0]); diff != "" {
				t.Errorf("another organization's product answers unlike a missing one (-missing +theirs):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(theirs, e.getProduct(t, otherKey, "globex-app")); diff != "" {
		t.Errorf("globex's product changed (-before +after):\n%s", diff)
	}
	if a := productAudit(t, e, e.org.ID); len(a) != 0 {
		t.Errorf("acme audit entries %v, want none", a)
	}
}

// TestProductPathID: a product path id follows the product id rule; any
// other answers 400 before the product is looked up.
func TestProductPathID(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsRead, licentia.ScopeProductsWrite)
	rule := issues("path.id", "must be 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen")
	routes := []struct {
		method, action string
		body           any
	}{
		{"GET", "", nil},
		{"PATCH", "", map[string]any{"name": "Desk"}},
		{"POST", "rotate-signing-key", nil},
		{"POST", "retire-public-key", map[string]any{"public_key": strings.Repeat("0", 64)}},
	}
	for _, id := range []string{"Desk-App", "-desk", "desk_app", strings.Repeat("d", 64)} {
		for _, rt := range routes {
			t.Run(rt.method+" "+rt.action+" "+id, func(t *testing.T) {
				e.run(t, scenario{
					call:       call{method: rt.method, path: productPath(id, rt.action), key: key, body: rt.body, invalid: true},
					wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: rule,
				})
			})
		}
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.action+" 63 characters", func(t *testing.T) {
			e.run(t, scenario{
				call:       call{method: rt.method, path: productPath(strings.Repeat("d", 63), rt.action), key: key, body: rt.body},
				wantStatus: http.StatusNotFound, wantCode: licentia.CodeProductNotFound,
			})
		})
		t.Run(rt.method+" "+rt.action+" unknown query parameter", func(t *testing.T) {
			e.run(t, scenario{
				call:       call{method: rt.method, path: productPath("missing", rt.action) + "?force=1", key: key, body: rt.body, invalid: true},
				wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues("query.force", "unknown parameter"),
			})
		})
	}
}

// TestProductScopes: products:read reads and products:write changes; each
// alone is refused the other's routes with details.missing.
func TestProductScopes(t *testing.T) {
	e := newTestEnv(t)
	read := e.key(t, e.org.ID, licentia.ScopeProductsRead)
	write := e.key(t, e.org.ID, licentia.ScopeProductsWrite)
	p := e.createProduct(t, write, productBody("desk-app", "DESK", nil))
	for _, tt := range []struct {
		method, path string
		body         any
		scope        licentia.Scope
		ok           int
	}{
		{"GET", "/v1/admin/products", nil, licentia.ScopeProductsRead, http.StatusOK},
		{"GET", productPath("desk-app", ""), nil, licentia.ScopeProductsRead, http.StatusOK},
		{"POST", "/v1/admin/products", productBody("desk-two", "DESKB", nil), licentia.ScopeProductsWrite, http.StatusCreated},
		{"PATCH", productPath("desk-app", ""), map[string]any{"name": "Desk 2"}, licentia.ScopeProductsWrite, http.StatusOK},
		{"POST", productPath("desk-app", "rotate-signing-key"), nil, licentia.ScopeProductsWrite, http.StatusOK},
		{"POST", productPath("desk-app", "retire-public-key"), map[string]any{"public_key": p.PublicKey}, licentia.ScopeProductsWrite, http.StatusOK},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			has, lacks := read, write
			if tt.scope == licentia.ScopeProductsWrite {
				has, lacks = write, read
			}
			e.run(t, scenario{
				call:       call{method: tt.method, path: tt.path, key: lacks, body: tt.body},
				wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope,
				wantDetails: map[string]any{"missing": []any{string(tt.scope)}},
			})
			e.run(t, scenario{call: call{method: tt.method, path: tt.path, key: has, body: tt.body}, wantStatus: tt.ok})
		})
	}
}

// TestUpdateProduct: PATCH changes name, current_major and
// machines_per_seat, each alone or together, and moves updated_at; a patch
// that changes nothing leaves updated_at and the audit log alone.
func TestUpdateProduct(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsRead, licentia.ScopeProductsWrite)
	p := e.createProduct(t, key, productBody("desk-app", "DESK", map[string]any{"machines_per_seat": 5}))
	for _, tt := range []struct {
		name   string
		body   map[string]any
		change func(p *productView)
	}{
		{"name", map[string]any{"name": "Desk Pro"}, func(p *productView) { p.Name = "Desk Pro" }},
		{"current_major", map[string]any{"current_major": 65535}, func(p *productView) { p.CurrentMajor = 65535 }},
		{"machines_per_seat lowered", map[string]any{"machines_per_seat": 1}, func(p *productView) { p.MachinesPerSeat = 1 }},
		{"machines_per_seat 1000", map[string]any{"machines_per_seat": 1000}, func(p *productView) { p.MachinesPerSeat = 1000 }},
		{
			"all three",
			map[string]any{"name": strings.Repeat("é", 200), "current_major": 1, "machines_per_seat": 2},
			func(p *productView) { p.Name, p.CurrentMajor, p.MachinesPerSeat = strings.Repeat("é", 200), 1, 2 },
		},
		{"nothing changes", map[string]any{"name": strings.Repeat("é", 200), "current_major": 1}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.clock.Advance(time.Minute)
			want := p
			if tt.change != nil {
				tt.change(&want)
				want.UpdatedAt = licentia.FormatTime(e.clock.Now())
			}
			r := e.run(t, scenario{call: call{method: "PATCH", path: productPath("desk-app", ""), key: key, body: tt.body}, wantStatus: http.StatusOK})
			if diff := cmp.Diff(want, r.product(t)); diff != "" {
				t.Errorf("patched product mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, e.getProduct(t, key, "desk-app")); diff != "" {
				t.Errorf("product read after PATCH mismatch (-want +got):\n%s", diff)
			}
			p = want
		})
	}
	if got := len(productAudit(t, e, e.org.ID)); got != 6 {
		t.Errorf("%d product audit entries, want 6: created and five changes", got)
	}
}

// TestUpdateProductBody: every PATCH field rule; at least one field; any
// other field refused, all problems at once; 400 before 404.
func TestUpdateProductBody(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProductsRead, licentia.ScopeProductsWrite)
	before := e.createProduct(t, key, productBody("desk-app", "DESK", nil))
	const atLeastOne = "give at least one of name, current_major, machines_per_seat, heartbeat_interval_seconds, machine_match, transfers_per_30_days, max_concurrent, lease_ttl_seconds, max_borrow_hours"
	for _, tt := range []struct {
		name   string
		body   any
		issues []string
	}{
		{"empty body", "", []string{"", atLeastOne}},
		{"empty object", map[string]any{}, []string{"", atLeastOne}},
		{"key_prefix alone", map[string]any{"key_prefix": "DESKB"}, []string{"/key_prefix", "unknown field", "", atLeastOne}},
		{"id with a name", map[string]any{"id": "desk-two", "name": "Desk"}, []string{"/id", "unknown field"}},
		{"key_prefix with a name", map[string]any{"key_prefix": "DESKB", "name": "Desk"}, []string{"/key_prefix", "unknown field"}},
		{"signing domain", map[string]any{"licence_signing_domain": "x", "name": "Desk"}, []string{"/licence_signing_domain", "unknown field"}},
		{"public_key", map[string]any{"public_key": before.PublicKey, "name": "Desk"}, []string{"/public_key", "unknown field"}},
		{"empty name", map[string]any{"name": ""}, []string{"/name", "must be 1 to 200 characters"}},
		{"name of 201 characters", map[string]any{"name": strings.Repeat("n", 201)}, []string{"/name", "must be 1 to 200 characters"}},
		{"name not a string", map[string]any{"name": 5}, []string{"/name", "must be a string"}},
		{"name null", map[string]any{"name": nil}, []string{"/name", "must be a string"}},
		{"current_major 0", map[string]any{"current_major": 0}, []string{"/current_major", "must be an integer from 1 to 65535"}},
		{"current_major 65536", map[string]any{"current_major": 65536}, []string{"/current_major", "must be an integer from 1 to 65535"}},
		{"current_major 1.5", map[string]any{"current_major": 1.5}, []string{"/current_major", "must be an integer"}},
		{"current_major as a string", map[string]any{"current_major": "2"}, []string{"/current_major", "must be an integer"}},
		{"machines_per_seat 0", map[string]any{"machines_per_seat": 0}, []string{"/machines_per_seat", "must be an integer from 1 to 1000"}},
		{"machines_per_seat 1001", map[string]any{"machines_per_seat": 1001}, []string{"/machines_per_seat", "must be an integer from 1 to 1000"}},
		{"heartbeat_interval_seconds 59", map[string]any{"heartbeat_interval_seconds": 59}, []string{"/heartbeat_interval_seconds", "must be an integer from 60 to 2592000"}},
		{"heartbeat_interval_seconds 2592001", map[string]any{"heartbeat_interval_seconds": 2592001}, []string{"/heartbeat_interval_seconds", "must be an integer from 60 to 2592000"}},
		{"heartbeat_interval_seconds 0", map[string]any{"heartbeat_interval_seconds": 0}, []string{"/heartbeat_interval_seconds", "must be an integer from 60 to 2592000"}},
		{"heartbeat_interval_seconds 90.5", map[string]any{"heartbeat_interval_seconds": 90.5}, []string{"/heartbeat_interval_seconds", "must be an integer"}},
		{"heartbeat_interval_seconds as a string", map[string]any{"heartbeat_interval_seconds": "90"}, []string{"/heartbeat_interval_seconds", "must be an integer"}},
		{"heartbeat_interval_seconds as an object", map[string]any{"heartbeat_interval_seconds": map[string]any{"s": 90}}, []string{"/heartbeat_interval_seconds", "must be an integer"}},
		{
			"every problem at once",
			map[string]any{"name": "", "current_major": 0, "machines_per_seat": 1.5, "id": "x"},
			[]string{
				"/id", "unknown field", "/current_major", "must be an integer from 1 to 65535",
				"/machines_per_seat", "must be an integer", "/name", "must be 1 to 200 characters",
			},
		},
	} {
		for _, id := range []string{"desk-app", "missing-app"} {
			t.Run(tt.name+"/"+id, func(t *testing.T) {
				c := call{method: "PATCH", path: productPath(id, ""), key: key, body: tt.body, invalid: true}
				e.run(t, scenario{call: c, wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed, wantDetails: issues(tt.issues...)})
				e.documentRefuses(t, c)
			})
		}
	}
	if diff := cmp.Diff(before, e.getProduct(t, key, "desk-app")); diff != "" {
		t.Errorf("refused patches changed the product (-before +after):\n%s", diff)
	}
}

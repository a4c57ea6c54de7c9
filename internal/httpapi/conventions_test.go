package httpapi_test

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
)

// panicText is what the test-only routes panic with; no answer may show it.
const panicText = "boom: card 4242 in ledger.go:12"

// newConventionsEnv is an env with two test-only routes that panic and a
// readiness check that fails while down is set.
func newConventionsEnv(t *testing.T, down *atomic.Bool) *testEnv {
	t.Helper()
	return newTestEnvWith(t, envOptions{
		ready: func() error {
			if down.Load() {
				return errors.New("the rate limiter does not answer")
			}
			return nil
		},
		setup: func(s *httpapi.Server) {
			s.OperatorForTest("GET /test/panic", func(http.ResponseWriter, *http.Request) error { panic(panicText) })
			s.HandleForTest("GET /v1/admin/test/panic", licentia.ScopeOrganizationRead,
				func(http.ResponseWriter, *http.Request) error { panic(errors.New(panicText)) })
		},
	})
}

// TestEveryAnswerNoStore: every answer, success or failure of any kind,
// carries Cache-Control: no-store, X-Content-Type-Options: nosniff and its
// request id (send checks them on every request of every test; this table
// reaches every status).
func TestEveryAnswerNoStore(t *testing.T) {
	var down atomic.Bool
	e := newConventionsEnv(t, &down)
	key := e.key(t, e.org.ID, licentia.ScopeOrganizationRead, licentia.ScopeProviderWrite)
	bigBody := paddedBody(`{"product_id":"desk-app"}`, 65537)
	for _, tt := range []scenario{
		{name: "200 admin", call: call{method: "GET", path: "/v1/admin/organization", key: key}, wantStatus: 200},
		{name: "200 healthz", call: call{method: "GET", path: "/healthz"}, wantStatus: 200},
		{name: "200 readyz", call: call{method: "GET", path: "/readyz"}, wantStatus: 200, wantBody: `{"status":"ready"}`},
		{name: "200 openapi", call: call{method: "GET", path: "/v1/openapi.json"}, wantStatus: 200},
		{name: "400", call: call{method: "GET", path: "/v1/admin/organization?x=1", key: key, invalid: true}, wantStatus: 400, wantCode: licentia.CodeValidationFailed,
			wantDetails: map[string]any{"issues": []any{map[string]any{"path": "query.x", "message": "unknown parameter"}}}},
		{name: "401", call: call{method: "GET", path: "/v1/admin/organization", invalid: true}, wantStatus: 401, wantCode: licentia.CodeUnauthorized},
		{name: "403", call: call{method: "GET", path: "/v1/admin/members", key: key}, wantStatus: 403, wantCode: licentia.CodeInsufficientScope,
			wantDetails: map[string]any{"missing": []any{"members:read"}}},
		{name: "404", call: call{method: "GET", path: "/v1/admin/nothing", key: key, invalid: true}, wantStatus: 404, wantCode: licentia.CodeNotFound},
		{name: "405", call: call{method: "DELETE", path: "/v1/admin/organization", key: key, invalid: true}, wantStatus: 405, wantCode: licentia.CodeMethodNotAllowed},
		{name: "413", call: call{method: "PUT", path: "/v1/admin/integrations/" + someID + "/mappings/p1", key: key, body: bigBody, invalid: true},
			wantStatus: 413, wantCode: licentia.CodePayloadTooLarge},
		{name: "422 activation", call: routeCalls("not-a-licence-key", "ada-laptop")[0], wantStatus: 422, wantCode: licentia.CodeLicenceKeyInvalid},
		{name: "500 operator", call: call{method: "GET", path: "/test/panic", invalid: true}, wantStatus: 500, wantCode: licentia.CodeInternal},
		{name: "500 admin", call: call{method: "GET", path: "/v1/admin/test/panic", key: key, invalid: true}, wantStatus: 500, wantCode: licentia.CodeInternal},
		{name: "404 integration", call: call{method: "DELETE", path: "/v1/admin/integrations/" + someID + "/mappings/p1", key: key},
			wantStatus: 404, wantCode: licentia.CodeIntegrationNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantEveryAnswerHeaders(t, e.run(t, tt))
		})
	}
	t.Run("503 readyz", func(t *testing.T) {
		down.Store(true)
		defer down.Store(false)
		r := e.run(t, scenario{call: call{method: "GET", path: "/readyz"}, wantStatus: 503, wantCode: licentia.CodeServiceUnavailable})
		wantEveryAnswerHeaders(t, r)
	})
}

// wantEveryAnswerHeaders fails unless r carries the headers every answer
// does: browsers must neither cache an answer (it may hold licence keys)
// nor guess its type from its bytes.
func wantEveryAnswerHeaders(t *testing.T, r *resp) {
	t.Helper()
	for name, want := range map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := r.header.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want %q once", name, got, want)
		}
	}
}

// TestRequestID: a client's x-request-id of 8 to 64 of A-Z a-z 0-9 . _ - is
// echoed; any other is replaced by a generated UUID. Error bodies carry the
// same id.
func TestRequestID(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeOrganizationRead)
	for _, tt := range []struct {
		name string
		id   string // "" sends none
		echo bool
	}{
		{"8 characters", "abcdEF12", true},
		{"64 characters", strings.Repeat("a1", 32), true},
		{"every allowed character", "AZaz09._-req", true},
		{"missing", "", false},
		{"7 characters", "abcdEF1", false},
		{"65 characters", strings.Repeat("a", 65), false},
		{"space", "abcd EF12", false},
		{"slash", "abcd/EF12", false},
		{"colon", "trace:12345", false},
		{"non-ASCII letter", "abcdéF12", false},
		{"quote", `abcd"EF12`, false},
	} {
		for _, route := range []struct {
			name string
			call call
		}{
			{"success", call{method: "GET", path: "/v1/admin/organization", key: key}},
			{"error", call{method: "GET", path: "/v1/admin/organization", invalid: true}},
		} {
			t.Run(tt.name+"/"+route.name, func(t *testing.T) {
				c := route.call
				if tt.id != "" {
					c.headers = map[string]string{"x-request-id": tt.id}
					c.invalid = c.invalid || !tt.echo
				}
				r := e.send(t, c)
				got := r.header.Get("X-Request-Id")
				if tt.echo {
					if got != tt.id {
						t.Errorf("X-Request-Id = %q, want %q", got, tt.id)
					}
				} else if id, ok := licentia.ParseUUID(got); !ok || id != got {
					t.Errorf("X-Request-Id = %q, want a generated lower-case UUID", got)
				}
				if r.status >= 400 {
					if rid := r.apiError(t).RequestID; rid != got {
						t.Errorf("error request_id = %q, want %q", rid, got)
					}
				}
			})
		}
	}
	t.Run("generated ids differ", func(t *testing.T) {
		a := e.send(t, call{method: "GET", path: "/healthz"}).header.Get("X-Request-Id")
		b := e.send(t, call{method: "GET", path: "/healthz"}).header.Get("X-Request-Id")
		if a == b {
			t.Errorf("two requests got the same generated id %q", a)
		}
	})
}

// TestUnknownRoute: a path no route matches answers 404 not_found in the
// error envelope, before any key or rate limit is looked at.
func TestUnknownRoute(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, keyScopes()...)
	for _, path := range []string{
		"/", "/v1", "/v1/admin", "/v1/admin/nothing", "/v1/admin/organization/", "/v1/admin/organizations",
		"/v1/admin/members/" + someID + "/role/x", "/V1/admin/organization", "/healthz/x", "/v2/admin/organization",
		"/v1//admin/organization", "/v1/admin/./organization", "/v1/admin/x/../organization", "//healthz",
	} {
		for _, k := range []struct{ name, key string }{{"no key", ""}, {"good key", key}} {
			t.Run(path+"/"+k.name, func(t *testing.T) {
				r := e.run(t, scenario{call: call{method: "GET", path: path, key: k.key, invalid: true}, wantStatus: http.StatusNotFound, wantCode: licentia.CodeNotFound})
				if got := r.header.Get("X-RateLimit-Limit-admin"); got != "" {
					t.Errorf("X-RateLimit-Limit-admin = %q on an unknown route, want none", got)
				}
			})
		}
	}
}

// TestWrongMethod: a known path with another method answers 405
// method_not_allowed with Allow, in the error envelope.
func TestWrongMethod(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, keyScopes()...)
	for _, tt := range []struct {
		method, path, allow string
	}{
		{"POST", "/v1/admin/organization", "GET, HEAD"},
		{"DELETE", "/v1/admin/members", "GET, HEAD"},
		{"PATCH", "/v1/admin/invitations", "GET, HEAD, POST"},
		{"GET", "/v1/admin/invitations/" + someID + "/revoke", "POST"},
		{"GET", "/v1/admin/members/" + someID, "DELETE"},
		{"POST", "/v1/admin/members/" + someID + "/role", "PUT"},
		{"POST", "/v1/admin/integrations/" + someID + "/mappings/p1", "DELETE, PUT"},
		{"POST", "/healthz", "GET, HEAD"},
		{"PUT", "/v1/openapi.json", "GET, HEAD"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := e.run(t, scenario{
				call:       call{method: tt.method, path: tt.path, key: key, invalid: true},
				wantStatus: http.StatusMethodNotAllowed, wantCode: licentia.CodeMethodNotAllowed,
			})
			if got := r.header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
		})
	}
}

// TestUnknownQueryParameters: every read route refuses parameters it does
// not take, all reported at once.
func TestUnknownQueryParameters(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, keyScopes()...)
	for _, path := range []string{
		"/v1/admin/organization", "/v1/admin/members", "/v1/admin/invitations", "/v1/admin/integrations",
		"/v1/admin/licences/counts", "/v1/admin/licences/" + someID, "/v1/admin/licences/" + someID + "/audit",
	} {
		for _, tt := range []struct {
			query string
			want  []string
		}{
			{"limit=10", []string{"query.limit"}},
			{"b=1&a=2&a=3", []string{"query.a", "query.b"}},
			{"Email=x", []string{"query.Email"}},
			{"flag", []string{"query.flag"}},
		} {
			t.Run(path+"?"+tt.query, func(t *testing.T) {
				var issues []any
				for _, p := range tt.want {
					msg := "unknown parameter"
					issues = append(issues, map[string]any{"path": p, "message": msg})
				}
				e.run(t, scenario{
					call:       call{method: "GET", path: path + "?" + tt.query, key: key, invalid: true},
					wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
					wantDetails: map[string]any{"issues": issues},
				})
			})
		}
	}
}

// TestBodySize: 64 KB is 65,536 bytes. A body declared larger answers 413
// payload_too_large without being read; one of exactly 65,536 bytes goes on
// to the route. (internal/web's decode_internal_test.go reads bodies of both sizes.)
func TestBodySize(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeProviderWrite, licentia.ScopeOrganizationRead)
	mapping := "/v1/admin/integrations/" + someID + "/mappings/p1"
	body := `{"product_id":"desk-app"}`
	for _, tt := range []scenario{
		{
			name:       "65,536 bytes",
			call:       call{method: "PUT", path: mapping, key: key, body: paddedBody(body, 65536)},
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeIntegrationNotFound,
		},
		{
			name:       "65,537 bytes",
			call:       call{method: "PUT", path: mapping, key: key, body: paddedBody(body, 65537), invalid: true},
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge,
		},
		{
			name:       "65,537 bytes on a read route",
			call:       call{method: "GET", path: "/v1/admin/organization", key: key, body: paddedBody("{}", 65537), invalid: true},
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge,
		},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
}

// TestOrderOfChecks: route, then rate limit, then 401, then 403 scope, then
// 413, then 400 (ratelimit_test.go shows 429 before 401).
func TestOrderOfChecks(t *testing.T) {
	e := newTestEnv(t)
	noScope := e.key(t, e.org.ID, licentia.ScopeMembersRead)
	write := e.key(t, e.org.ID, licentia.ScopeProviderWrite)
	mapping := "/v1/admin/integrations/" + someID + "/mappings/p1"
	big := paddedBody(`{"product_id":"desk-app"}`, 65537)
	for _, tt := range []scenario{
		{
			name:       "404 before 401",
			call:       call{method: "GET", path: "/v1/admin/organisation", invalid: true},
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeNotFound,
		},
		{
			name:       "405 before 401",
			call:       call{method: "POST", path: "/v1/admin/organization", invalid: true},
			wantStatus: http.StatusMethodNotAllowed, wantCode: licentia.CodeMethodNotAllowed,
		},
		{
			name:       "401 before 403",
			call:       call{method: "PUT", path: mapping, key: "licentia_" + strings.Repeat("a", 12) + "_" + strings.Repeat("b", 43), body: big, invalid: true},
			wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized,
		},
		{
			name:       "401 before 400",
			call:       call{method: "GET", path: "/v1/admin/integrations/x/mappings?y=1", invalid: true},
			wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized,
		},
		{
			name:       "403 before 413",
			call:       call{method: "PUT", path: mapping, key: noScope, body: big, invalid: true},
			wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope,
			wantDetails: map[string]any{"missing": []any{"provider:write"}},
		},
		{
			name:       "403 before 400",
			call:       call{method: "PUT", path: "/v1/admin/integrations/x/mappings/a.b?y=1", key: noScope, body: "[", invalid: true},
			wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope,
			wantDetails: map[string]any{"missing": []any{"provider:write"}},
		},
		{
			name:       "413 before 400",
			call:       call{method: "PUT", path: "/v1/admin/integrations/x/mappings/a.b?y=1", key: write, body: big, invalid: true},
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: licentia.CodePayloadTooLarge,
		},
		{
			name:       "400 before 503",
			call:       call{method: "PUT", path: "/v1/admin/integrations/x/mappings/p1", key: write, body: `{"product_id":"desk-app"}`, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: map[string]any{"issues": []any{map[string]any{"path": "path.id", "message": "must be a UUID"}}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
}

// TestPanic: a panicking handler answers 500 internal_error with the fixed
// message and nothing of the panic; the panic is logged with the request id
// and the server keeps serving.
func TestPanic(t *testing.T) {
	var down atomic.Bool
	e := newConventionsEnv(t, &down)
	key := e.key(t, e.org.ID, licentia.ScopeOrganizationRead)
	for _, tt := range []struct {
		name      string
		call      call
		rateLimit bool
	}{
		{"operator route", call{method: "GET", path: "/test/panic", invalid: true}, false},
		{"administration route", call{method: "GET", path: "/v1/admin/test/panic", key: key, invalid: true}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(t, scenario{
				call: tt.call, wantStatus: http.StatusInternalServerError, wantCode: licentia.CodeInternal,
				notWant: []string{"boom", "4242", "ledger", "goroutine", ".go:", "panic"},
			})
			if got, want := r.apiError(t).Message, "An unexpected error occurred. Retry later with backoff."; got != want {
				t.Errorf("message = %q, want %q", got, want)
			}
			if got := r.header.Get("X-RateLimit-Limit-admin") != ""; got != tt.rateLimit {
				t.Errorf("rate-limit headers present = %v, want %v", got, tt.rateLimit)
			}
			id := r.header.Get("X-Request-Id")
			if !strings.Contains(e.logs.String(), `"msg":"panic","request_id":"`+id+`"`) {
				t.Errorf("no panic log line with request_id %s:\n%s", id, e.logs.String())
			}
			e.run(t, scenario{call: call{method: "GET", path: "/healthz"}, wantStatus: http.StatusOK})
		})
	}
}

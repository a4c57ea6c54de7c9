package httpapi_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/build"
	"github.com/licentia/licentia/internal/licentia"
)

// TestAdminRoutesRefuseBadKeys: on every administration route, a key that is
// missing, malformed, wrong, revoked or expired answers 401 unauthorized,
// all alike.
func TestAdminRoutesRefuseBadKeys(t *testing.T) {
	e := newTestEnv(t)
	good, rec := e.newKey(t, e.org.ID, admin.NewAPIKey{Name: "good", Scopes: keyScopes()})
	revoked, revokedRec := e.newKey(t, e.org.ID, admin.NewAPIKey{Name: "revoked", Scopes: keyScopes()})
	if _, err := e.admin.RevokeAPIKey(t.Context(), licentia.OperatorActor, e.org.ID, revokedRec.ID); err != nil {
		t.Fatalf("RevokeAPIKey() error = %v", err)
	}
	expiry := start.Add(time.Hour)
	expired, _ := e.newKey(t, e.org.ID, admin.NewAPIKey{Name: "expired", Scopes: keyScopes(), ExpiresAt: &expiry})
	e.clock.Advance(2 * time.Hour)

	secret := strings.Repeat("A", 43)
	for _, rt := range adminRoutes {
		for _, tt := range []struct {
			name    string
			key     string
			headers map[string]string
			invalid bool // the document requires a bearer token
		}{
			{name: "missing key", invalid: true},
			{name: "empty bearer", headers: map[string]string{"Authorization": "Bearer "}, invalid: true},
			{name: "basic scheme", headers: map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(good))}, invalid: true},
			{name: "malformed key", key: "not-a-key"},
			{name: "key cut short", key: good[:len(good)-1]},
			{name: "key with a character added", key: good + "A"},
			{name: "key with another marker", key: "licensa_" + good[len("licentia_"):]},
			{name: "wrong secret with a real prefix", key: "licentia_" + rec.Prefix + "_" + secret},
			{name: "unknown prefix", key: "licentia_zzzzzzzzzzzz_" + secret},
			{name: "revoked key", key: revoked},
			{name: "expired key", key: expired},
		} {
			t.Run(rt.String()+"/"+tt.name, func(t *testing.T) {
				c := rt.call(tt.key)
				c.headers, c.invalid = tt.headers, tt.invalid
				e.run(t, scenario{call: c, wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized})
			})
		}
	}
}

// TestAdminRoutesRefuseRepeatedAuthorization: on every administration
// route, a request with more than one Authorization header answers 401
// unauthorized, whichever of them holds a good key: servers and proxies
// disagree on which one counts, so none is taken. Routes that take no key
// ignore the header, however many are sent.
func TestAdminRoutesRefuseRepeatedAuthorization(t *testing.T) {
	e := newTestEnv(t)
	good := e.key(t, e.org.ID, keyScopes()...)
	other := e.key(t, e.org.ID, keyScopes()...)
	for _, rt := range adminRoutes {
		for _, tt := range []struct {
			name   string
			values []string
		}{
			{"the same key twice", []string{"Bearer " + good, "Bearer " + good}},
			{"good key first", []string{"Bearer " + good, "Bearer not-a-key"}},
			{"good key last", []string{"Bearer not-a-key", "Bearer " + good}},
			{"two good keys", []string{"Bearer " + good, "Bearer " + other}},
			{"good key and another scheme", []string{"Bearer " + good, "Basic " + base64.StdEncoding.EncodeToString([]byte(good))}},
		} {
			t.Run(rt.String()+"/"+tt.name, func(t *testing.T) {
				c := rt.call("")
				c.more, c.invalid = http.Header{"Authorization": tt.values}, true
				e.run(t, scenario{call: c, wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized})
			})
		}
	}
	t.Run("healthz", func(t *testing.T) {
		c := call{method: "GET", path: "/healthz", more: http.Header{"Authorization": {"Bearer " + good, "Bearer " + other}}, invalid: true}
		e.run(t, scenario{call: c, wantStatus: http.StatusOK, wantBody: healthBody(t, build.Read())})
	})
}

// TestKeyLifetime: a new key works at once; a revoked key and a key past its
// expiry answer 401 at once (no cache keeps them working).
func TestKeyLifetime(t *testing.T) {
	e := newTestEnv(t)
	org := func(key string) call { return call{method: "GET", path: "/v1/admin/organization", key: key} }

	key, rec := e.newKey(t, e.org.ID, admin.NewAPIKey{Name: "k", Scopes: []licentia.Scope{licentia.ScopeOrganizationRead}})
	e.run(t, scenario{call: org(key), wantStatus: http.StatusOK})
	if _, err := e.admin.RevokeAPIKey(t.Context(), licentia.OperatorActor, e.org.ID, rec.ID); err != nil {
		t.Fatalf("RevokeAPIKey() error = %v", err)
	}
	e.run(t, scenario{call: org(key), wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized})

	expiry := start.Add(time.Hour)
	expiring, _ := e.newKey(t, e.org.ID, admin.NewAPIKey{Name: "e", Scopes: []licentia.Scope{licentia.ScopeOrganizationRead}, ExpiresAt: &expiry})
	e.clock.Set(expiry.Add(-time.Millisecond))
	e.run(t, scenario{call: org(expiring), wantStatus: http.StatusOK})
	e.clock.Set(expiry)
	e.run(t, scenario{call: org(expiring), wantStatus: http.StatusUnauthorized, wantCode: licentia.CodeUnauthorized})
}

// TestAdminRoutesNeedScope: a key holding every scope but the route's own
// answers 403 insufficient_scope naming the missing scope.
func TestAdminRoutesNeedScope(t *testing.T) {
	e := newTestEnv(t)
	for _, rt := range adminRoutes {
		t.Run(rt.String(), func(t *testing.T) {
			key := e.key(t, e.org.ID, scopesBut(rt.scope)...)
			e.run(t, scenario{
				call:        rt.call(key),
				wantStatus:  http.StatusForbidden,
				wantCode:    licentia.CodeInsufficientScope,
				wantDetails: map[string]any{"missing": []any{string(rt.scope)}},
			})
		})
	}
}

// TestTeamChangesRefuseEveryKey: no key holds members:write, so even a key
// with every scope gets 403 insufficient_scope on the team-changing routes,
// before the path, query or body size is looked at.
func TestTeamChangesRefuseEveryKey(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, keyScopes()...)
	missing := map[string]any{"missing": []any{"members:write"}}
	for _, rt := range adminRoutes {
		if !rt.isTeamChange() {
			continue
		}
		for _, tt := range []struct {
			name string
			call call
		}{
			{"valid request", rt.call(key)},
			{"unknown query parameter", call{method: rt.method, path: rt.path() + "?force=1", key: key, body: rt.body, invalid: true}},
			{"body over 64 KB", call{method: rt.method, path: rt.path(), key: key, body: paddedBody(`{"role":"admin"}`, 65537), invalid: true}},
			{"id not a UUID", call{method: rt.method, path: strings.Replace(rt.path(), someID, "me", 1), key: key, body: rt.body, invalid: true}},
		} {
			if tt.name == "id not a UUID" && !strings.Contains(rt.pattern, "{id}") {
				continue
			}
			t.Run(rt.String()+"/"+tt.name, func(t *testing.T) {
				e.run(t, scenario{call: tt.call, wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope, wantDetails: missing})
			})
		}
	}
}

// TestIntegrationRoutes: on a service without a master key, a valid request
// answers 503 integrations_not_configured once its integration is found;
// path and query problems answer 400 first, and an unknown integration 404.
func TestIntegrationRoutes(t *testing.T) {
	e := newTestEnvWith(t, envOptions{noMasterKey: true})
	key := e.key(t, e.org.ID, licentia.ScopeProviderRead, licentia.ScopeProviderWrite)
	for _, rt := range adminRoutes {
		if !rt.isIntegration() {
			continue
		}
		want := scenario{call: rt.call(key), wantStatus: http.StatusNotFound, wantCode: licentia.CodeIntegrationNotFound}
		if rt.pattern == "/v1/admin/integrations" {
			want.wantStatus, want.wantCode = http.StatusServiceUnavailable, licentia.CodeIntegrationsNotConfigured
		}
		t.Run(rt.String(), func(t *testing.T) { e.run(t, want) })
	}
	issue := func(path, message string) map[string]any {
		return map[string]any{"issues": []any{map[string]any{"path": path, "message": message}}}
	}
	mapping := "/v1/admin/integrations/" + someID + "/mappings/"
	for _, tt := range []scenario{
		{
			name:       "upper-case UUID is accepted",
			call:       call{method: "GET", path: "/v1/admin/integrations/" + strings.ToUpper(someID) + "/mappings", key: key},
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeIntegrationNotFound,
		},
		{
			name:       "id not a UUID",
			call:       call{method: "GET", path: "/v1/admin/integrations/stripe/mappings", key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: issue("path.id", "must be a UUID"),
		},
		{
			name:       "UUID without hyphens",
			call:       call{method: "DELETE", path: "/v1/admin/integrations/" + strings.ReplaceAll(someID, "-", "") + "/mappings/p1", key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: issue("path.id", "must be a UUID"),
		},
		{
			name:       "provider product id with a space",
			call:       call{method: "PUT", path: mapping + "pro%20plan", key: key, body: map[string]any{"product_id": "desk-app"}, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: issue("path.providerProductId", "must be 1 to 100 of A-Z a-z 0-9 _ -"),
		},
		{
			name:       "provider product id of 101 characters",
			call:       call{method: "DELETE", path: mapping + strings.Repeat("p", 101), key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: issue("path.providerProductId", "must be 1 to 100 of A-Z a-z 0-9 _ -"),
		},
		{
			name:       "provider product id of 100 characters",
			call:       call{method: "DELETE", path: mapping + strings.Repeat("p", 100), key: key},
			wantStatus: http.StatusNotFound, wantCode: licentia.CodeIntegrationNotFound,
		},
		{
			name:       "unknown query parameter",
			call:       call{method: "GET", path: "/v1/admin/integrations?provider=stripe", key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: issue("query.provider", "unknown parameter"),
		},
		{
			name:       "every problem at once",
			call:       call{method: "DELETE", path: "/v1/admin/integrations/x/mappings/a.b?z=1&y=2", key: key, invalid: true},
			wantStatus: http.StatusBadRequest, wantCode: licentia.CodeValidationFailed,
			wantDetails: map[string]any{"issues": []any{
				map[string]any{"path": "path.id", "message": "must be a UUID"},
				map[string]any{"path": "path.providerProductId", "message": "must be 1 to 100 of A-Z a-z 0-9 _ -"},
				map[string]any{"path": "query.y", "message": "unknown parameter"},
				map[string]any{"path": "query.z", "message": "unknown parameter"},
			}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
}

// TestNoKeyInLogs runs requests with good, wrong, revoked and misplaced keys
// and fails if any log line holds a key or its secret.
func TestNoKeyInLogs(t *testing.T) {
	e := newTestEnv(t)
	good, rec := e.newKey(t, e.org.ID, admin.NewAPIKey{Name: "good", Scopes: keyScopes()})
	revoked, revokedRec := e.newKey(t, e.org.ID, admin.NewAPIKey{Name: "revoked", Scopes: keyScopes()})
	if _, err := e.admin.RevokeAPIKey(t.Context(), licentia.OperatorActor, e.org.ID, revokedRec.ID); err != nil {
		t.Fatalf("RevokeAPIKey() error = %v", err)
	}
	wrong := "licentia_" + rec.Prefix + "_" + strings.Repeat("Z", 43)
	keys := []string{good, revoked, wrong}

	for _, key := range keys {
		for _, rt := range adminRoutes {
			e.send(t, rt.call(key))
		}
		e.send(t, call{method: "GET", path: "/v1/admin/organization?api_key=" + key, key: key, invalid: true})
		e.send(t, call{method: "GET", path: "/v1/admin/nope", key: key, invalid: true})
		e.send(t, call{method: "PATCH", path: "/v1/admin/organization", key: key, invalid: true})
		e.send(t, call{method: "GET", path: "/v1/admin/organization", headers: map[string]string{"Authorization": key}, invalid: true})
		e.send(t, call{method: "PUT", path: "/v1/admin/integrations/" + someID + "/mappings/p1", key: key,
			body: paddedBody(`{"product_id":"`+key+`"}`, 65537), invalid: true})
	}
	// Close waits for every request in flight, so every access line is written.
	e.srv.Close()

	logs := e.logs.String()
	if n := strings.Count(logs, `"msg":"request"`); n < 3*(len(adminRoutes)+5) {
		t.Fatalf("log holds %d access lines, want one per request:\n%s", n, logs)
	}
	for _, key := range keys {
		secret := key[strings.LastIndex(key, "_")+1:]
		for _, s := range []string{key, secret} {
			if strings.Contains(logs, s) {
				t.Errorf("log contains key material %q:\n%s", s, logs)
			}
		}
	}
	if strings.Contains(logs, "Bearer") {
		t.Errorf("log contains an Authorization header:\n%s", logs)
	}
}

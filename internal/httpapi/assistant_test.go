package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// guardedCalls are the calls an AI assistant is refused whatever its role,
// on endpoint id: adding, changing or removing an endpoint, or replacing its
// secret (403 forbidden); anonymising a licence or writing a product (403
// insufficient_scope, the scope withheld).
func guardedCalls(token, id string) []scenario {
	missing := func(s licentia.Scope) map[string]any { return map[string]any{"missing": []any{string(s)}} }
	forbidden := func(c call) scenario {
		return scenario{name: c.method + " " + c.path, call: c, wantStatus: http.StatusForbidden, wantCode: licentia.CodeForbidden}
	}
	scope := func(c call, s licentia.Scope) scenario {
		return scenario{name: c.method + " " + c.path, call: c, wantStatus: http.StatusForbidden, wantCode: licentia.CodeInsufficientScope,
			wantDetails: missing(s)}
	}
	return []scenario{
		forbidden(call{method: "POST", path: hooksPath(""), key: token, body: endpointBody(hookURL("/new"), licentia.EventLicenceIssued)}),
		forbidden(call{method: "PATCH", path: hooksPath(id), key: token, body: map[string]any{"url": hookURL("/elsewhere")}}),
		forbidden(call{method: "PATCH", path: hooksPath(id), key: token, body: map[string]any{"enabled": false}}),
		forbidden(call{method: "DELETE", path: hooksPath(id), key: token}),
		forbidden(call{method: "POST", path: hooksPath(id, "rotate-secret"), key: token}),
		scope(call{method: "POST", path: "/v1/admin/licences/" + licentia.NewID() + "/anonymise", key: token,
			body: map[string]any{"confirm": true}}, licentia.ScopeLicencesAnonymise),
		scope(call{method: "POST", path: "/v1/admin/products", key: token,
			body: map[string]any{"id": "desk-app", "name": "Desk", "key_prefix": "DESK", "current_major": 1}}, licentia.ScopeProductsWrite),
		scope(call{method: "PATCH", path: "/v1/admin/products/desk", key: token, body: map[string]any{"name": "Desk 2"}}, licentia.ScopeProductsWrite),
		scope(call{method: "POST", path: "/v1/admin/products/desk/rotate-signing-key", key: token, body: map[string]any{"keep_previous": true}},
			licentia.ScopeProductsWrite),
	}
}

// TestAssistantGuardRails: whatever the member's role, owner included, an
// AI assistant is refused every webhook endpoint write and every scope an
// assistant never holds, and nothing changes; it may still read endpoints
// and deliveries and retry a delivery, audited as the member.
func TestAssistantGuardRails(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite)
	ep := e.addEndpoint(t, key, endpointBody(hookURL("/r"), licentia.EventLicenceIssued))
	d := e.injectDeliveries(t, e.org.ID, ep.Endpoint.ID, 1, func(int) time.Time { return start })[0]
	owner := e.ownerID(t, e.org.ID)
	ids := map[licentia.Role]string{licentia.RoleOwner: owner}
	toks := map[licentia.Role]string{licentia.RoleOwner: e.assistantToken(t, e.org.ID, "owner@acme.example")}
	for _, r := range []licentia.Role{licentia.RoleAdmin, licentia.RoleDeveloper} {
		ids[r], toks[r] = e.teamMember(t, e.org.ID, string(r)+"@acme.example", r)
	}

	for _, r := range []licentia.Role{licentia.RoleOwner, licentia.RoleAdmin, licentia.RoleDeveloper} {
		t.Run(string(r), func(t *testing.T) {
			for _, tt := range guardedCalls(toks[r], ep.Endpoint.ID) {
				t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
			}
			if got := e.getEndpoint(t, toks[r], ep.Endpoint.ID); !cmp.Equal(got, ep.Endpoint) {
				t.Errorf("endpoint after refused writes = %+v, want %+v", got, ep.Endpoint)
			}
			e.run(t, scenario{call: call{method: "GET", path: hooksPath(""), key: toks[r]}, wantStatus: http.StatusOK})
			if got := e.listDeliveries(t, toks[r], ep.Endpoint.ID, ""); len(got.Deliveries) != 1 || got.Deliveries[0].ID != d.ID {
				t.Errorf("deliveries = %+v, want the one injected", got)
			}
			e.run(t, scenario{call: call{method: "POST", path: retryPath(ep.Endpoint.ID, d.ID), key: toks[r]}, wantStatus: http.StatusAccepted})
		})
	}

	// A viewer's assistant lacks webhooks:write before any guard-rail.
	_, viewer := e.teamMember(t, e.org.ID, "viewer@acme.example", licentia.RoleViewer)
	e.run(t, scenario{call: call{method: "DELETE", path: hooksPath(ep.Endpoint.ID), key: viewer}, wantStatus: http.StatusForbidden,
		wantCode: licentia.CodeInsufficientScope, wantDetails: map[string]any{"missing": []any{"webhooks:write"}}})

	// The key that added the endpoint still changes it: the guard-rails are
	// an assistant's only.
	e.patchEndpoint(t, key, ep.Endpoint.ID, map[string]any{"description": "kept"})

	var retriedBy []licentia.Actor
	for _, a := range webhookAudit(t, e, e.org.ID) {
		if a.Action == "webhook_delivery.retried" {
			retriedBy = append(retriedBy, a.Actor)
		}
	}
	want := []licentia.Actor{licentia.MemberActor(owner), licentia.MemberActor(ids[licentia.RoleAdmin]), licentia.MemberActor(ids[licentia.RoleDeveloper])}
	if diff := cmp.Diff(want, retriedBy); diff != "" {
		t.Errorf("retries audited as (-want +got):\n%s", diff)
	}
	if n := e.productCount(t, e.org.ID); n != 0 {
		t.Errorf("%d products after refused creates, want 0", n)
	}
}

// TestForAssistantHoldsKeys: a request marked as made for an AI assistant
// (a tool call of the MCP server) holds an API key to the assistant
// guard-rails, even a key with every scope a key may hold; the same key
// unmarked is not held, and a client cannot mark its own request.
func TestForAssistantHoldsKeys(t *testing.T) {
	e := newTestEnv(t)
	key, rec := e.newKey(t, e.org.ID, adminKey(keyScopes()...))
	ep := e.addEndpoint(t, key, endpointBody(hookURL("/r"), licentia.EventLicenceIssued))
	d := e.injectDeliveries(t, e.org.ID, ep.Endpoint.ID, 1, func(int) time.Time { return start })[0]

	serve := func(c call) (int, map[string]any) {
		t.Helper()
		var body []byte
		if c.body != nil {
			body, _ = json.Marshal(c.body)
		}
		req := httptest.NewRequestWithContext(web.ForAssistant(t.Context()), c.method, c.path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+c.key)
		w := httptest.NewRecorder()
		e.api.ServeHTTP(w, req)
		var out map[string]any
		if w.Body.Len() > 0 {
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
				t.Fatalf("%s %s: answer %q: %v", c.method, c.path, w.Body, err)
			}
		}
		return w.Code, out
	}
	for _, tt := range guardedCalls(key, ep.Endpoint.ID) {
		t.Run(tt.name, func(t *testing.T) {
			status, out := serve(tt.call)
			errObj, _ := out["error"].(map[string]any)
			if status != tt.wantStatus || errObj["code"] != string(tt.wantCode) || !cmp.Equal(errObj["details"], anyOrNil(tt.wantDetails)) {
				t.Errorf("status %d, answer %v; want %d %s %v", status, out, tt.wantStatus, tt.wantCode, tt.wantDetails)
			}
		})
	}
	if status, _ := serve(call{method: "GET", path: hooksPath(ep.Endpoint.ID), key: key}); status != http.StatusOK {
		t.Errorf("GET endpoint for an assistant: status %d, want 200", status)
	}
	if status, _ := serve(call{method: "POST", path: retryPath(ep.Endpoint.ID, d.ID), key: key}); status != http.StatusAccepted {
		t.Errorf("retry for an assistant: status %d, want 202", status)
	}
	a := webhookAudit(t, e, e.org.ID)
	if len(a) != 2 || a[1].Action != "webhook_delivery.retried" || !cmp.Equal(a[1].Actor, licentia.APIKeyActor(rec.ID)) {
		t.Errorf("audit = %+v, want the add then the retry by the key", a)
	}

	// Unmarked, over HTTP, the key changes the endpoint; no header a client
	// sends marks a request.
	e.run(t, scenario{call: call{method: "POST", path: hooksPath(ep.Endpoint.ID, "rotate-secret"), key: key,
		headers: map[string]string{"X-Assistant": "1", "Mcp-Session-Id": "x"}, invalid: true}, wantStatus: http.StatusOK})
}

// anyOrNil is m as a decoded answer holds it: nil when empty.
func anyOrNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	var out any
	json.Unmarshal(b, &out)
	return out
}

package mcpserver_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
)

// TestRefusals: a refused call is a tool error whose structured content is
// the API's own error object for the same request.
func TestRefusals(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		f := e.fixtures(t)
		ownerTok := e.token(t, "owner@acme.example")
		owner := e.session(t, ownerTok)
		lic := licentia.NewID()
		if r := call(t, owner, "issue_licence", map[string]any{"id": lic, "product_id": "desk", "email": "ann@example.com"}); r.isError {
			t.Fatalf("issue_licence = %s", r.text)
		}
		adminID, adminTok := e.member(t, "admin@acme.example", licentia.RoleAdmin)
		_, viewerTok := e.member(t, "viewer@acme.example", licentia.RoleViewer)
		key := e.key(t, keyScopes()...)
		unknown := licentia.NewID()
		sessions := map[string]string{"owner": ownerTok, "admin": adminTok, "viewer": viewerTok, "key": key}

		for _, tt := range []struct {
			name, as, tool string
			args           map[string]any
			method, path   string
			body           any
			code           licentia.Code
		}{
			{"a viewer revokes", "viewer", "revoke_licence", map[string]any{"id": lic, "reason": "no"},
				"POST", "/v1/admin/licences/" + lic + "/revoke", map[string]any{"reason": "no"}, licentia.CodeInsufficientScope},
			{"a viewer invites", "viewer", "invite_member", map[string]any{"email": "x@acme.example", "role": "viewer"},
				"POST", "/v1/admin/invitations", map[string]any{"email": "x@acme.example", "role": "viewer"}, licentia.CodeInsufficientRole},
			{"an address mail cannot be sent to", "owner", "invite_member", map[string]any{"email": "a..b@acme.example", "role": "viewer"},
				"POST", "/v1/admin/invitations", map[string]any{"email": "a..b@acme.example", "role": "viewer"}, licentia.CodeValidationFailed},
			{"an admin removes themself", "admin", "remove_member", map[string]any{"id": adminID},
				"DELETE", "/v1/admin/members/" + adminID, nil, licentia.CodeForbidden},
			{"an admin changes the owner", "admin", "change_member_role", map[string]any{"id": e.ownerID(t), "role": "viewer"},
				"PUT", "/v1/admin/members/" + e.ownerID(t) + "/role", map[string]any{"role": "viewer"}, licentia.CodeForbidden},
			{"an admin gives owner", "admin", "invite_member", map[string]any{"email": "x@acme.example", "role": "owner"},
				"POST", "/v1/admin/invitations", map[string]any{"email": "x@acme.example", "role": "owner"}, licentia.CodeValidationFailed},
			{"a key changes the team", "key", "change_member_role", map[string]any{"id": adminID, "role": "viewer"},
				"PUT", "/v1/admin/members/" + adminID + "/role", map[string]any{"role": "viewer"}, licentia.CodeInsufficientScope},
			{"an unknown licence", "owner", "get_licence", map[string]any{"id": unknown},
				"GET", "/v1/admin/licences/" + unknown, nil, licentia.CodeLicenceNotFound},
			{"a licence id that is not one", "owner", "get_licence", map[string]any{"id": "latest"},
				"GET", "/v1/admin/licences/latest", nil, licentia.CodeValidationFailed},
			{"a path id with a slash", "owner", "get_product", map[string]any{"id": "desk/../../organization"},
				"GET", "/v1/admin/products/desk%2F..%2F..%2Forganization", nil, licentia.CodeValidationFailed},
			{"an unknown field and a bad one", "owner", "issue_licence",
				map[string]any{"product_id": "desk", "email": "ann@example.com", "limit_count": 1.5, "colour": "red"},
				"POST", "/v1/admin/licences", map[string]any{"product_id": "desk", "email": "ann@example.com", "limit_count": 1.5, "colour": "red"},
				licentia.CodeValidationFailed},
			{"a find without a criterion", "owner", "find_licences", nil, "GET", "/v1/admin/licences", nil, licentia.CodeValidationFailed},
			{"a count since no time", "owner", "count_licences", map[string]any{"since": 20260301},
				"GET", "/v1/admin/licences/counts?since=20260301", nil, licentia.CodeValidationFailed},
			{"a count since 1969 in UTC", "owner", "count_licences", map[string]any{"since": "1970-01-01T00:30:00+01:00"},
				"GET", "/v1/admin/licences/counts?since=1970-01-01T00%3A30%3A00%2B01%3A00", nil, licentia.CodeValidationFailed},
			{"an expiry in the year 10000 in UTC", "owner", "issue_licence",
				map[string]any{"product_id": "desk", "email": "ann@example.com", "expires_at": "9999-12-31T23:30:00-01:00"},
				"POST", "/v1/admin/licences", map[string]any{"product_id": "desk", "email": "ann@example.com", "expires_at": "9999-12-31T23:30:00-01:00"},
				licentia.CodeValidationFailed},
			{"an argument a read does not take", "owner", "get_organization", map[string]any{"verbose": true},
				"GET", "/v1/admin/organization?verbose=true", nil, licentia.CodeValidationFailed},
			{"a reason too long", "owner", "revoke_licence", map[string]any{"id": lic, "reason": string(make([]byte, 501))},
				"POST", "/v1/admin/licences/" + lic + "/revoke", map[string]any{"reason": string(make([]byte, 501))}, licentia.CodeValidationFailed},
			{"an unknown integration", "owner", "save_mapping",
				map[string]any{"integration_id": licentia.NewID(), "provider_product_id": "prod_basic", "product_id": "desk"},
				"PUT", "/v1/admin/integrations/" + licentia.NewID() + "/mappings/prod_basic", map[string]any{"product_id": "desk"},
				licentia.CodeIntegrationNotFound},
			{"an unknown provider product", "owner", "save_mapping",
				map[string]any{"integration_id": f.integration, "provider_product_id": "prod_nope", "product_id": "desk"},
				"PUT", "/v1/admin/integrations/" + f.integration + "/mappings/prod_nope", map[string]any{"product_id": "desk"},
				licentia.CodeValidationFailed},
			{"an unknown delivery", "owner", "retry_webhook_delivery", map[string]any{"id": f.endpoint, "delivery_id": licentia.NewID()},
				"POST", "/v1/admin/webhooks/" + f.endpoint + "/deliveries/" + licentia.NewID() + "/retry", nil, licentia.CodeWebhookDeliveryNotFound},
		} {
			t.Run(tt.name, func(t *testing.T) {
				cs := e.session(t, sessions[tt.as])
				got := sameAsAPI(t, e, cs, sessions[tt.as], tt.tool, tt.args, tt.method, tt.path, tt.body)
				if !got.isError || field(t, got.structured, "error.code") != string(tt.code) {
					t.Errorf("%s = %s, want a tool error %s", tt.tool, got.text, tt.code)
				}
			})
		}
	})
}

// TestRefusalsBeforeTheAPI: a path id a path cannot carry (missing, null,
// not a string, empty) and arguments that are not an object are refused as
// the API words its own refusals, at the route's path names.
func TestRefusalsBeforeTheAPI(t *testing.T) {
	e := newEnv(t, nil)
	cs := e.session(t, e.token(t, "owner@acme.example"))
	issue := func(path, msg string) map[string]any {
		return map[string]any{"error": map[string]any{"code": "validation_failed", "message": "The request is not valid.",
			"details": map[string]any{"issues": []any{map[string]any{"path": path, "message": msg}}}}}
	}
	for _, tt := range []struct {
		tool string
		args map[string]any
		want map[string]any
	}{
		{"get_licence", map[string]any{}, issue("path.id", "is required")},
		{"get_licence", map[string]any{"id": nil}, issue("path.id", "is required")},
		{"get_licence", map[string]any{"id": ""}, issue("path.id", "is required")},
		{"get_licence", map[string]any{"id": 7}, issue("path.id", "must be a string")},
		{"retry_webhook_delivery", map[string]any{"id": licentia.NewID()}, issue("path.deliveryId", "is required")},
	} {
		got := call(t, cs, tt.tool, tt.args)
		if !got.isError {
			t.Errorf("%s %v = %s, want a tool error", tt.tool, tt.args, got.text)
			continue
		}
		if diff := cmp.Diff(tt.want, withoutRequestID(t, got.structured)); diff != "" {
			t.Errorf("%s %v (-want +got):\n%s", tt.tool, tt.args, diff)
		}
	}
	// Arguments that are no object reach the tool raw only from a client
	// that breaks the protocol.
	a := e.post(t, "Bearer "+e.token(t, "owner@acme.example"),
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_organization","arguments":[1]}}`)
	if a.status != http.StatusOK || field(t, a.body, "result.isError") != true ||
		!cmp.Equal(withoutRequestID(t, mustJSON(t, field(t, a.body, "result.structuredContent"))), issue("", "the arguments must be a JSON object")) {
		t.Errorf("arguments [1]: %d %s", a.status, a.body)
	}
}

// TestKeyOnMCP: an API key acts with its own scopes, audited as the key;
// the team-changing routes refuse it as the API does.
func TestKeyOnMCP(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		e.fixtures(t)
		key, keyID := e.keyRecord(t, licentia.ScopeLicencesRead, licentia.ScopeLicencesWrite, licentia.ScopeAuditRead)
		cs := e.session(t, key)
		lic := licentia.NewID()
		if r := call(t, cs, "issue_licence", map[string]any{"id": lic, "product_id": "desk", "email": "ann@example.com"}); r.isError {
			t.Fatalf("issue_licence = %s", r.text)
		}
		if r := call(t, cs, "revoke_licence", map[string]any{"id": lic, "reason": "fraud"}); r.isError {
			t.Fatalf("revoke_licence = %s", r.text)
		}
		events := field(t, call(t, cs, "get_licence_audit", map[string]any{"id": lic}).structured, "events").([]any)
		if len(events) != 2 {
			t.Fatalf("audit = %v, want the issue and the revocation", events)
		}
		for _, ev := range events {
			want := map[string]any{"type": "api_key", "id": keyID}
			if diff := cmp.Diff(want, ev.(map[string]any)["actor"]); diff != "" {
				t.Errorf("audit actor (-want +got):\n%s", diff)
			}
		}
		r := call(t, cs, "get_product", map[string]any{"id": "desk"})
		if diff := cmp.Diff(map[string]any{"error": map[string]any{"code": "insufficient_scope",
			"message": "The caller lacks a scope this route needs.", "details": map[string]any{"missing": []any{"products:read"}}}},
			withoutRequestID(t, r.structured)); !r.isError || diff != "" {
			t.Errorf("get_product without products:read (-want +got):\n%s", diff)
		}
	})
}

// TestGuardRails: whatever its role or scopes, an assistant, by token or
// by API key, never reaches a route no assistant may call. No tool offers
// one; and were a route called as a tool calls its own, the API would
// refuse it: 403 forbidden for the webhook endpoint writes, 403
// insufficient_scope for anonymising and product writes.
func TestGuardRails(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		f := e.fixtures(t)
		_, adminTok := e.member(t, "admin@acme.example", licentia.RoleAdmin)
		creds := map[string]string{
			"owner token": e.token(t, "owner@acme.example"),
			"admin token": adminTok,
			"key":         e.key(t, keyScopes()...),
		}
		hook := "https://hooks.example.com/other"
		guarded := []struct {
			method, path string
			in           any
			args         map[string]any
			code         licentia.Code
		}{
			{"POST", "/v1/admin/webhooks", admin.CreateWebhookEndpoint{}, map[string]any{"url": hook, "event_types": []string{"licence.issued"}},
				licentia.CodeForbidden},
			{"PATCH", "/v1/admin/webhooks/{id}", admin.UpdateWebhookEndpoint{}, map[string]any{"id": f.endpoint, "url": hook}, licentia.CodeForbidden},
			{"DELETE", "/v1/admin/webhooks/{id}", nil, map[string]any{"id": f.endpoint}, licentia.CodeForbidden},
			{"POST", "/v1/admin/webhooks/{id}/rotate-secret", nil, map[string]any{"id": f.endpoint}, licentia.CodeForbidden},
			{"POST", "/v1/admin/licences/{id}/anonymise", admin.Anonymise{}, map[string]any{"id": licentia.NewID(), "confirm": true},
				licentia.CodeInsufficientScope},
			{"POST", "/v1/admin/products", admin.NewProduct{}, map[string]any{"id": "other", "name": "Other", "key_prefix": "OTHR",
				"current_major": 1}, licentia.CodeInsufficientScope},
			{"PATCH", "/v1/admin/products/{id}", admin.ProductPatch{}, map[string]any{"id": "desk", "name": "Desk 2"}, licentia.CodeInsufficientScope},
			{"POST", "/v1/admin/products/{id}/rotate-signing-key", admin.RotateKey{}, map[string]any{"id": "desk", "keep_previous": true},
				licentia.CodeInsufficientScope},
			{"POST", "/v1/admin/products/{id}/retire-public-key", admin.RetireKey{}, map[string]any{"id": "desk", "fingerprint": "x"},
				licentia.CodeInsufficientScope},
		}
		for name, cred := range creds {
			t.Run(name, func(t *testing.T) {
				for _, g := range guarded {
					res, err := e.mcp.CallRoute(t.Context(), "Bearer "+cred, g.method, g.path, g.in, g.args)
					if err != nil {
						t.Fatalf("%s %s: %v", g.method, g.path, err)
					}
					if !res.IsError || field(t, mustJSON(t, res.StructuredContent), "error.code") != string(g.code) {
						t.Errorf("%s %s as an assistant = %v, want %s", g.method, g.path, res.StructuredContent, g.code)
					}
				}
				// What an assistant may do on webhooks it does.
				cs := e.session(t, cred)
				byID := map[string]any{"id": f.endpoint}
				for tool, args := range map[string]map[string]any{"list_webhook_endpoints": nil, "get_webhook_endpoint": byID,
					"list_webhook_deliveries": byID} {
					if r := call(t, cs, tool, args); r.isError {
						t.Errorf("%s = %s", tool, r.text)
					}
				}
			})
		}
		// Nothing changed: the endpoint as added, and no product but desk.
		ep := e.api(t, "GET", "/v1/admin/webhooks/"+f.endpoint, e.setup, nil)
		if field(t, ep.body, "webhook_endpoint.url") != "https://hooks.example.com/licentia" || field(t, ep.body, "webhook_endpoint.enabled") != true {
			t.Errorf("endpoint after refused writes: %s", ep.body)
		}
		if ps := field(t, e.api(t, "GET", "/v1/admin/products", e.setup, nil).body, "products").([]any); len(ps) != 1 {
			t.Errorf("%d products after refused creates, want 1", len(ps))
		}
		// The same key, straight on the API, is not an assistant.
		if a := e.api(t, "POST", "/v1/admin/webhooks/"+f.endpoint+"/rotate-secret", creds["key"], nil); a.status != http.StatusOK {
			t.Errorf("rotate-secret with the key on the API: %d %s", a.status, a.body)
		}
	})
}

// TestRateLimitPerMember: a member's assistants share the member's admin
// limit, per route, whichever token and whether through the API or a tool;
// another member and a key are not held back.
func TestRateLimitPerMember(t *testing.T) {
	e := newEnv(t, nil)
	_, first := e.member(t, "support@acme.example", licentia.RoleSupport)
	second := e.token(t, "support@acme.example")
	for i := range ratelimit.Admin.Limit {
		if a := e.api(t, "GET", "/v1/admin/organization", first, nil); a.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, a.status, a.body)
		}
	}
	cs := e.session(t, second)
	r := call(t, cs, "get_organization", nil)
	if !r.isError || field(t, r.structured, "error.code") != "rate_limited" {
		t.Errorf("get_organization past the member's limit = %s, want rate_limited", r.text)
	}
	if r := call(t, cs, "list_products", nil); r.isError {
		t.Errorf("list_products, another route = %s", r.text)
	}
	for _, other := range []string{e.token(t, "owner@acme.example"), e.setup} {
		if r := call(t, e.session(t, other), "get_organization", nil); r.isError {
			t.Errorf("get_organization as another caller = %s", r.text)
		}
	}
	e.clock.Advance(ratelimit.Admin.Window)
	if r := call(t, cs, "get_organization", nil); r.isError {
		t.Errorf("get_organization in the next window = %s", r.text)
	}
}

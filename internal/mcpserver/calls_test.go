package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// decoded is JSON decoded for comparison.
func decoded(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("JSON %s: %v", b, err)
	}
	return v
}

// field is the value at a dotted path of a JSON object.
func field(t *testing.T, b []byte, path string) any {
	t.Helper()
	v := decoded(t, b)
	for part := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: no %s in %s", path, part, b)
		}
		v = m[part]
	}
	return v
}

// sameAsAPI calls a tool and the route it maps to with the same credential
// and wants the same answer: a success whose structured content is the
// route's body, or a tool error whose structured content is the route's
// error object (its request id apart).
func sameAsAPI(t *testing.T, e *env, cs *mcp.ClientSession, token, tool string, args map[string]any, method, path string, body any) callResult {
	t.Helper()
	got := call(t, cs, tool, args)
	want := e.api(t, method, path, token, body)
	if got.isError != (want.status >= 400) {
		t.Fatalf("%s: isError %v, API %d %s; tool gave %s", tool, got.isError, want.status, want.body, got.text)
	}
	if want.status >= 400 {
		if diff := cmp.Diff(withoutRequestID(t, want.body), withoutRequestID(t, got.structured)); diff != "" {
			t.Errorf("%s refusal differs from %s %s (-API +tool):\n%s", tool, method, path, diff)
		}
		return got
	}
	if diff := cmp.Diff(decoded(t, want.body), decoded(t, got.structured)); diff != "" {
		t.Errorf("%s result differs from %s %s (-API +tool):\n%s", tool, method, path, diff)
	}
	if diff := cmp.Diff(decoded(t, want.body), decoded(t, []byte(got.text))); diff != "" {
		t.Errorf("%s text differs from %s %s (-API +tool):\n%s", tool, method, path, diff)
	}
	return got
}

// lic2Mail issues, through the API, a licence whose key may be mailed.
func lic2Mail(t *testing.T, e *env, token string) string {
	t.Helper()
	r := e.api(t, "POST", "/v1/admin/licences", token, map[string]any{"product_id": "desk", "email": "cat@example.com"})
	if r.status != http.StatusCreated {
		t.Fatalf("issue: %d %s", r.status, r.body)
	}
	return field(t, r.body, "licence.id").(string)
}

// fixtures are what the owner's assistant works on: a product, a webhook
// endpoint, a connected Stripe integration and a second member.
type fixtures struct {
	integration, endpoint, member string
}

func (e *env) fixtures(t *testing.T) fixtures {
	t.Helper()
	if r := e.api(t, "POST", "/v1/admin/products", e.setup, map[string]any{"id": "desk", "name": "Desk", "key_prefix": "DESK",
		"current_major": 1}); r.status != http.StatusCreated {
		t.Fatalf("create product: %d %s", r.status, r.body)
	}
	r := e.api(t, "POST", "/v1/admin/webhooks", e.setup, map[string]any{"url": "https://hooks.example.com/licentia",
		"event_types": []string{"licence.issued", "licence.revoked"}})
	if r.status != http.StatusCreated {
		t.Fatalf("add endpoint: %d %s", r.status, r.body)
	}
	var f fixtures
	f.endpoint = field(t, r.body, "webhook_endpoint.id").(string)
	v, err := e.admin.ConnectIntegration(t.Context(), licentia.OperatorActor, e.org.ID,
		admin.ConnectIntegration{Provider: "stripe", Name: "Shop", APIKey: shopKey, WebhookSecret: "whsec_McpShopWebhookSecret"})
	if err != nil {
		t.Fatalf("ConnectIntegration() error = %v", err)
	}
	f.integration = v.Integration.ID
	f.member, _ = e.member(t, "dev@acme.example", licentia.RoleDeveloper)
	return f
}

// TestToolsAnswerAsTheAPI: every tool, called by an owner's assistant,
// answers exactly what its route answers the same credential; changes are
// audited as the member; and no credential or email reaches the log.
func TestToolsAnswerAsTheAPI(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		f := e.fixtures(t)
		owner := e.ownerID(t)
		tok := e.token(t, "owner@acme.example")
		cs := e.session(t, tok)
		same := func(tool string, args map[string]any, method, path string, body any) callResult {
			t.Helper()
			return sameAsAPI(t, e, cs, tok, tool, args, method, path, body)
		}

		// A licence issued through the tool reads back through the API as
		// the tool answered it, key included.
		lic := licentia.NewID()
		issued := call(t, cs, "issue_licence", map[string]any{"id": lic, "product_id": "desk", "email": "ann@example.com",
			"external_ref": "order-1"})
		if issued.isError {
			t.Fatalf("issue_licence = %s", issued.text)
		}
		read := e.api(t, "GET", "/v1/admin/licences/"+lic, tok, nil)
		if diff := cmp.Diff(field(t, read.body, "licence"), field(t, issued.structured, "licence")); diff != "" {
			t.Errorf("issued licence differs from the API's read (-API +tool):\n%s", diff)
		}
		key, _ := field(t, issued.structured, "licence_key").(string)
		if key == "" || key != field(t, read.body, "licence_key") {
			t.Errorf("issued key %q, API reads %v", key, field(t, read.body, "licence_key"))
		}

		// Reads.
		same("get_organization", nil, "GET", "/v1/admin/organization", nil)
		same("list_products", nil, "GET", "/v1/admin/products", nil)
		same("get_product", map[string]any{"id": "desk"}, "GET", "/v1/admin/products/desk", nil)
		same("find_licences", map[string]any{"email": "ANN@example.com", "product_id": "desk"}, "GET",
			"/v1/admin/licences?email=ANN%40example.com&product_id=desk", nil)
		same("count_licences", map[string]any{"product_id": "desk", "since": "2026-03-01T00:00:00+01:00"}, "GET",
			"/v1/admin/licences/counts?product_id=desk&since="+url.QueryEscape("2026-03-01T00:00:00+01:00"), nil)
		same("get_licence", map[string]any{"id": strings.ToUpper(lic)}, "GET", "/v1/admin/licences/"+lic, nil)
		same("list_integrations", nil, "GET", "/v1/admin/integrations", nil)
		same("list_webhook_endpoints", nil, "GET", "/v1/admin/webhooks", nil)
		same("get_webhook_endpoint", map[string]any{"id": f.endpoint}, "GET", "/v1/admin/webhooks/"+f.endpoint, nil)
		deliveries := same("list_webhook_deliveries", map[string]any{"id": f.endpoint}, "GET", "/v1/admin/webhooks/"+f.endpoint+"/deliveries", nil)
		same("list_members", nil, "GET", "/v1/admin/members", nil)

		// Changes: the tool's answer, then the route's to the same change
		// made again, which finds it done.
		ds, _ := field(t, deliveries.structured, "deliveries").([]any)
		if len(ds) != 1 {
			t.Fatalf("deliveries = %s, want the issue's", deliveries.structured)
		}
		delivery := ds[0].(map[string]any)["id"].(string)
		same("retry_webhook_delivery", map[string]any{"id": f.endpoint, "delivery_id": delivery}, "POST",
			"/v1/admin/webhooks/"+f.endpoint+"/deliveries/"+delivery+"/retry", nil)

		for _, op := range []string{"revoke", "reinstate", "expire"} {
			got := call(t, cs, op+"_licence", map[string]any{"id": lic, "reason": "asked by the customer"})
			again := e.api(t, "POST", "/v1/admin/licences/"+lic+"/"+op, tok, map[string]any{"reason": "asked by the customer"})
			if got.isError || field(t, got.structured, "changed") != true || field(t, again.body, "changed") != false {
				t.Fatalf("%s_licence = %s; again through the API %s", op, got.text, again.body)
			}
			if diff := cmp.Diff(field(t, again.body, "licence"), field(t, got.structured, "licence")); diff != "" {
				t.Errorf("%s_licence licence differs from the API's (-API +tool):\n%s", op, diff)
			}
		}
		same("get_licence_audit", map[string]any{"id": lic}, "GET", "/v1/admin/licences/"+lic+"/audit", nil)

		// A key mailed by the assistant is queued, as through the API.
		mailed := call(t, cs, "send_licence_key", map[string]any{"id": lic2Mail(t, e, tok)})
		if mailed.isError || field(t, mailed.structured, "mail.status") != "queued" {
			t.Errorf("send_licence_key = %s, want a queued mail", mailed.text)
		}

		// A machine activated by the application, freed by the assistant.
		lic2 := licentia.NewID()
		key2 := field(t, call(t, cs, "issue_licence", map[string]any{"id": lic2, "product_id": "desk", "email": "bob@example.com"}).structured,
			"licence_key").(string)
		act := e.api(t, "POST", "/v1/activations", "", map[string]any{"licence_key": key2, "machine_id": "m-1", "label": "Laptop",
			"os": "linux", "app_version": "1.0"})
		if act.status != http.StatusCreated {
			t.Fatalf("activate: %d %s", act.status, act.body)
		}
		activation := field(t, e.api(t, "GET", "/v1/admin/licences/"+lic2, tok, nil).body, "activations").([]any)[0].(map[string]any)["id"].(string)
		freed := call(t, cs, "deactivate_activation", map[string]any{"id": activation})
		again := e.api(t, "POST", "/v1/admin/activations/"+activation+"/deactivate", tok, nil)
		if freed.isError || field(t, freed.structured, "changed") != true || field(t, again.body, "changed") != false ||
			!cmp.Equal(field(t, freed.structured, "activation"), field(t, again.body, "activation")) {
			t.Errorf("deactivate_activation = %s; again through the API %s", freed.text, again.body)
		}

		// A leaked key reissued by the assistant: the answer is the API's
		// 201, the new licence replacing the old, and again it is refused.
		reissued := call(t, cs, "reissue_licence", map[string]any{"id": lic2, "reason": "posted in a forum"})
		newLicence, _ := field(t, reissued.structured, "licence").(map[string]any)
		if reissued.isError || newLicence["replaces"] != lic2 || field(t, reissued.structured, "licence_key") == key2 {
			t.Errorf("reissue_licence = %s, want the new licence replacing %s with a new key", reissued.text, lic2)
		}
		if again := e.api(t, "POST", "/v1/admin/licences/"+lic2+"/reissue", tok, map[string]any{"reason": "again"}); again.status != http.StatusConflict {
			t.Errorf("reissue again through the API: %d %s, want 409", again.status, again.body)
		}

		// Mappings.
		mapping := map[string]any{"integration_id": f.integration, "provider_product_id": "prod_basic", "product_id": "desk",
			"limit_count": 2, "key_valid_days": nil}
		mpath := "/v1/admin/integrations/" + f.integration + "/mappings/prod_basic"
		same("save_mapping", mapping, "PUT", mpath, map[string]any{"product_id": "desk", "limit_count": 2, "key_valid_days": nil})
		same("list_mappings", map[string]any{"integration_id": f.integration}, "GET", "/v1/admin/integrations/"+f.integration+"/mappings", nil)
		del := call(t, cs, "delete_mapping", map[string]any{"integration_id": f.integration, "provider_product_id": "prod_basic"})
		if del.isError || del.structured != nil || del.text != "Done: No Content." {
			t.Errorf("delete_mapping = %+v, want a success without content", del)
		}
		same("delete_mapping", map[string]any{"integration_id": f.integration, "provider_product_id": "prod_basic"}, "DELETE", mpath, nil)

		// Held orders, kept here as a provider's webhook would: listed,
		// dropped and released through the tools as through the API.
		e.api(t, "PUT", mpath, tok, map[string]any{"product_id": "desk"})
		toDrop, toRelease := heldOrder(t, e, f.integration, "pi_held_1"), heldOrder(t, e, f.integration, "pi_held_2")
		same("list_held_orders", nil, "GET", "/v1/admin/orders/held", nil)
		if r := call(t, cs, "drop_held_order", map[string]any{"id": toDrop}); r.isError || r.text != "Done: No Content." {
			t.Errorf("drop_held_order = %+v, want a success without content", r)
		}
		released := call(t, cs, "release_held_order", map[string]any{"id": toRelease, "email": "held@example.com"})
		if ls, _ := field(t, released.structured, "licences").([]any); released.isError || len(ls) != 1 {
			t.Errorf("release_held_order = %s, want one licence", released.text)
		}
		if again := e.api(t, "POST", "/v1/admin/orders/held/"+toRelease+"/release", tok, map[string]any{}); again.status != http.StatusNotFound {
			t.Errorf("release again through the API: %d %s, want 404", again.status, again.body)
		}
		same("drop_held_order", map[string]any{"id": toDrop}, "DELETE", "/v1/admin/orders/held/"+toDrop, nil)

		// The team.
		inv := call(t, cs, "invite_member", map[string]any{"email": "new@acme.example", "role": "support"})
		if inv.isError {
			t.Fatalf("invite_member = %s", inv.text)
		}
		same("list_invitations", nil, "GET", "/v1/admin/invitations", nil)
		invID := field(t, inv.structured, "invitation.id").(string)
		revoked := call(t, cs, "revoke_invitation", map[string]any{"id": invID})
		if revoked.isError || field(t, revoked.structured, "invitation.revoked_at") == nil {
			t.Errorf("revoke_invitation = %s", revoked.text)
		}
		same("revoke_invitation", map[string]any{"id": invID}, "POST", "/v1/admin/invitations/"+invID+"/revoke", nil)
		same("change_member_role", map[string]any{"id": f.member, "role": "support"}, "PUT", "/v1/admin/members/"+f.member+"/role",
			map[string]any{"role": "support"})
		if r := call(t, cs, "remove_member", map[string]any{"id": f.member}); r.isError || r.text != "Done: No Content." {
			t.Errorf("remove_member = %+v", r)
		}
		same("remove_member", map[string]any{"id": f.member}, "DELETE", "/v1/admin/members/"+f.member, nil)

		// Every change made through a tool is audited as the member.
		entries, err := e.store.OrganizationAudit(t.Context(), e.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, a := range entries {
			if a.Actor.Type == licentia.ActorMember {
				seen[a.Action] = true
				if a.Actor.ID == nil || *a.Actor.ID != owner {
					t.Errorf("%s audited as member %v, want the owner %s", a.Action, a.Actor.ID, owner)
				}
			}
		}
		for _, action := range []string{"invitation.created", "invitation.revoked", "member.role_changed", "member.removed",
			"mapping.saved", "mapping.deleted", "webhook_delivery.retried"} {
			if !seen[action] {
				t.Errorf("no %s audited as a member: %v", action, seen)
			}
		}
		audit := field(t, e.api(t, "GET", "/v1/admin/licences/"+lic+"/audit", tok, nil).body, "events").([]any)
		for _, a := range audit {
			if actor := a.(map[string]any)["actor"].(map[string]any); actor["type"] != "member" || actor["id"] != owner {
				t.Errorf("licence audit entry %v, want the owner as actor", a)
			}
		}

		logs := e.logs.String()
		for _, secret := range []string{tok, e.setup, key, key2, "ann@example.com", "bob@example.com", "new@acme.example", shopKey} {
			if strings.Contains(logs, secret) {
				t.Errorf("the log holds %q", secret)
			}
		}
		if !strings.Contains(logs, `"pattern":"/mcp"`) || !strings.Contains(logs, `"pattern":"POST /v1/admin/licences"`) {
			t.Errorf("the log lacks the /mcp access lines or the tool calls' route lines")
		}
	})
}

// heldOrder keeps a paid order of integration, with an email failing the
// rule, as the provider's webhook would, and returns its id.
func heldOrder(t *testing.T, e *env, integration, orderID string) string {
	t.Helper()
	h := &licentia.HeldOrder{ID: licentia.NewID(), OrgID: e.org.ID, IntegrationID: integration, Provider: "stripe",
		EventID: "evt_" + orderID, OrderKey: orderID, OrderID: &orderID, Email: new("no address"), Reason: licentia.HeldEmailInvalid,
		Items: []licentia.HeldItem{{ProviderProductID: "prod_basic", Quantity: 1}}, Status: licentia.HeldPending, CreatedAt: start}
	err := e.store.InTx(t.Context(), func(tx store.Tx) error {
		_, err := tx.CreateHeldOrder(t.Context(), h)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return h.ID
}

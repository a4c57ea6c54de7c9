package mcpserver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/licentia/licentia/internal/licentia"
)

// The tools by what they need, as the decisions list them.
var (
	readTools = []string{"get_organization", "list_products", "get_product", "list_product_features", "find_licences", "list_licences",
		"export_licences", "count_licences", "get_licence",
		"get_licence_audit", "list_integrations", "list_mappings", "list_held_orders", "list_webhook_endpoints", "get_webhook_endpoint",
		"list_webhook_deliveries", "list_members", "list_invitations"}
	licenceTools = []string{"issue_licence", "revoke_licence", "expire_licence", "reinstate_licence", "reissue_licence",
		"deactivate_activation", "send_licence_key"}
	providerTools = []string{"save_mapping", "delete_mapping", "release_held_order", "drop_held_order"}
	webhookTools  = []string{"retry_webhook_delivery"}
	teamTools     = []string{"invite_member", "revoke_invitation", "change_member_role", "remove_member"}
	licenceReads  = []string{"find_licences", "list_licences", "export_licences", "count_licences", "get_licence"}
)

func sorted(lists ...[]string) []string {
	out := slices.Concat(lists...)
	slices.Sort(out)
	return out
}

// TestToolsListByRole: an assistant is offered the tools its member's role
// allows, at that moment: reads for a viewer, licence changes from support,
// mappings and delivery retries from developer, and the team-changing tools
// only to a role that may change the team.
func TestToolsListByRole(t *testing.T) {
	e := newEnv(t, nil)
	want := map[licentia.Role][]string{
		licentia.RoleViewer:    sorted(readTools),
		licentia.RoleSupport:   sorted(readTools, licenceTools),
		licentia.RoleDeveloper: sorted(readTools, licenceTools, providerTools, webhookTools),
		licentia.RoleAdmin:     sorted(readTools, licenceTools, providerTools, webhookTools, teamTools),
		licentia.RoleOwner:     sorted(readTools, licenceTools, providerTools, webhookTools, teamTools),
	}
	toks := map[licentia.Role]string{licentia.RoleOwner: e.token(t, "owner@acme.example")}
	ids := map[licentia.Role]string{}
	for _, r := range []licentia.Role{licentia.RoleViewer, licentia.RoleSupport, licentia.RoleDeveloper, licentia.RoleAdmin} {
		ids[r], toks[r] = e.member(t, string(r)+"@acme.example", r)
	}
	for r, tok := range toks {
		t.Run(string(r), func(t *testing.T) {
			if diff := cmp.Diff(want[r], sorted(toolNames(t, e.session(t, tok)))); diff != "" {
				t.Errorf("tools of a %s (-want +got):\n%s", r, diff)
			}
		})
	}

	// A role change holds from the next request of the same session.
	cs := e.session(t, toks[licentia.RoleAdmin])
	owner := e.session(t, toks[licentia.RoleOwner])
	if r := call(t, owner, "change_member_role", map[string]any{"id": ids[licentia.RoleAdmin], "role": "viewer"}); r.isError {
		t.Fatalf("change_member_role = %s", r.text)
	}
	if diff := cmp.Diff(want[licentia.RoleViewer], sorted(toolNames(t, cs))); diff != "" {
		t.Errorf("tools of an admin made viewer (-want +got):\n%s", diff)
	}
}

// TestToolsListByKey: an API key is offered the tools of its scopes, less
// what no assistant may hold: never a team-changing tool, and no tool at
// all for anonymising, product writes (save_product_feature and
// delete_product_feature included) or webhook endpoint writes.
func TestToolsListByKey(t *testing.T) {
	e := newEnv(t, nil)
	for _, tt := range []struct {
		name   string
		scopes []licentia.Scope
		want   []string
	}{
		{"every key scope", keyScopes(), sorted(readTools, licenceTools, providerTools, webhookTools)},
		{"licences:read", []licentia.Scope{licentia.ScopeLicencesRead}, sorted(licenceReads)},
		{"licences and audit", []licentia.Scope{licentia.ScopeLicencesRead, licentia.ScopeLicencesWrite, licentia.ScopeAuditRead},
			sorted(licenceReads, []string{"get_licence_audit"}, licenceTools)},
		{"products and anonymise", []licentia.Scope{licentia.ScopeProductsRead, licentia.ScopeProductsWrite, licentia.ScopeLicencesAnonymise},
			sorted([]string{"list_products", "get_product", "list_product_features"})},
		{"webhooks", []licentia.Scope{licentia.ScopeWebhooksRead, licentia.ScopeWebhooksWrite},
			sorted([]string{"list_webhook_endpoints", "get_webhook_endpoint", "list_webhook_deliveries"}, webhookTools)},
		{"team reads", []licentia.Scope{licentia.ScopeOrganizationRead, licentia.ScopeMembersRead},
			sorted([]string{"get_organization", "list_members", "list_invitations"})},
		{"provider", []licentia.Scope{licentia.ScopeProviderRead, licentia.ScopeProviderWrite},
			sorted([]string{"list_integrations", "list_mappings", "list_held_orders"}, providerTools)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := sorted(toolNames(t, e.session(t, e.key(t, tt.scopes...))))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tools of a key with %v (-want +got):\n%s", tt.scopes, diff)
			}
		})
	}
}

// toolSchemas are every tool's input properties and required list: the
// route's path ids, named id or <kind>_id, then its request struct's body
// or query fields.
var toolSchemas = map[string]struct{ props, required []string }{
	"get_organization":      {},
	"list_products":         {},
	"get_product":           {[]string{"id"}, []string{"id"}},
	"list_product_features": {[]string{"id"}, []string{"id"}},
	"find_licences":         {[]string{"email", "q", "product_id", "external_ref", "state", "status", "term", "source", "feature"}, nil},
	"count_licences":        {[]string{"product_id", "since", "feature"}, nil},
	"list_licences": {[]string{"email", "q", "product_id", "external_ref", "state", "status", "term", "source", "feature", "order_id",
		"machine_id", "issued_after", "issued_before", "limit", "cursor"}, nil},
	"export_licences": {[]string{"email", "q", "product_id", "external_ref", "state", "status", "term", "source", "feature", "order_id",
		"machine_id", "issued_after", "issued_before"}, nil},
	"get_licence":       {[]string{"id"}, []string{"id"}},
	"get_licence_audit": {[]string{"id"}, []string{"id"}},
	"issue_licence": {[]string{"id", "product_id", "email", "limit_kind", "limit_count", "expires_at", "major", "external_ref", "trial",
		"send_key_mail", "features", "transfers_per_30_days", "max_concurrent"}, []string{"product_id", "email"}},
	"send_licence_key":      {[]string{"id"}, []string{"id"}},
	"revoke_licence":        {[]string{"id", "reason"}, []string{"id", "reason"}},
	"expire_licence":        {[]string{"id", "reason"}, []string{"id", "reason"}},
	"reinstate_licence":     {[]string{"id", "reason"}, []string{"id", "reason"}},
	"reissue_licence":       {[]string{"id", "reason"}, []string{"id", "reason"}},
	"deactivate_activation": {[]string{"id"}, []string{"id"}},
	"list_integrations":     {},
	"list_mappings":         {[]string{"integration_id"}, []string{"integration_id"}},
	"save_mapping": {[]string{"integration_id", "provider_product_id", "product_id", "limit_kind", "limit_count", "key_valid_days",
		"on_refund", "on_subscription_end", "renewal_url", "send_key_mail", "features", "adds_to"}, []string{"integration_id", "provider_product_id", "product_id"}},
	"delete_mapping":          {[]string{"integration_id", "provider_product_id"}, []string{"integration_id", "provider_product_id"}},
	"list_held_orders":        {},
	"release_held_order":      {[]string{"id", "email", "limit_count", "adds_to_licence_id"}, []string{"id"}},
	"drop_held_order":         {[]string{"id"}, []string{"id"}},
	"list_webhook_endpoints":  {},
	"get_webhook_endpoint":    {[]string{"id"}, []string{"id"}},
	"list_webhook_deliveries": {[]string{"id", "cursor"}, []string{"id"}},
	"retry_webhook_delivery":  {[]string{"id", "delivery_id"}, []string{"id", "delivery_id"}},
	"list_members":            {},
	"list_invitations":        {},
	"invite_member":           {[]string{"email", "role"}, []string{"email", "role"}},
	"revoke_invitation":       {[]string{"id"}, []string{"id"}},
	"change_member_role":      {[]string{"id", "role"}, []string{"id", "role"}},
	"remove_member":           {[]string{"id"}, []string{"id"}},
}

// ownerTools lists every tool as the owner's assistant sees them.
func ownerTools(t *testing.T, e *env) map[string]*mcp.Tool {
	t.Helper()
	res, err := e.session(t, e.token(t, "owner@acme.example")).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("ListTools() error = %v", err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// TestToolSchemas: each tool's input schema is an object of exactly its
// route's path ids and request fields, nothing else allowed, required as
// the operation requires them, each field described as the API document
// describes it and typed as the request struct reads it.
func TestToolSchemas(t *testing.T) {
	e := newEnv(t, nil)
	tools := ownerTools(t, e)
	if len(tools) != len(toolSchemas) {
		t.Errorf("%d tools, want %d", len(tools), len(toolSchemas))
	}
	for name, want := range toolSchemas {
		tl := tools[name]
		if tl == nil {
			t.Errorf("no tool %s", name)
			continue
		}
		s, _ := tl.InputSchema.(map[string]any)
		if s["type"] != "object" || s["additionalProperties"] != false {
			t.Errorf("%s: schema %v, want an object with additionalProperties false", name, s)
		}
		props, _ := s["properties"].(map[string]any)
		var gotProps, gotRequired []string
		for p, ps := range props {
			gotProps = append(gotProps, p)
			if _, ok := ps.(map[string]any)["type"]; !ok {
				t.Errorf("%s: property %s has no type: %v", name, p, ps)
			}
		}
		for _, r := range s["required"].([]any) {
			gotRequired = append(gotRequired, r.(string))
		}
		if diff := cmp.Diff(sorted(want.props), sorted(gotProps)); diff != "" {
			t.Errorf("%s properties (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(sorted(want.required), sorted(gotRequired)); diff != "" {
			t.Errorf("%s required (-want +got):\n%s", name, diff)
		}
		if tl.Title == "" || !strings.Contains(tl.Description, "Scope: ") {
			t.Errorf("%s: title %q, description %q; want a title and the route's scope", name, tl.Title, tl.Description)
		}
	}

	prop := func(tool, name string) map[string]any {
		return tools[tool].InputSchema.(map[string]any)["properties"].(map[string]any)[name].(map[string]any)
	}
	for _, tt := range []struct {
		tool, prop, key string
		want            any
	}{
		{"get_licence", "id", "format", "uuid"},
		{"retry_webhook_delivery", "delivery_id", "format", "uuid"},
		{"issue_licence", "limit_count", "type", "integer"},
		{"issue_licence", "limit_count", "minimum", float64(1)},
		{"issue_licence", "limit_count", "maximum", float64(4294967295)},
		{"issue_licence", "limit_kind", "enum", []any{"seats", "machines"}},
		{"issue_licence", "trial", "type", "boolean"},
		{"issue_licence", "expires_at", "type", "string"},
		{"issue_licence", "product_id", "pattern", "^[a-z0-9][a-z0-9-]{0,62}$"},
		{"save_mapping", "key_valid_days", "type", []any{"integer", "null"}},
		{"save_mapping", "key_valid_days", "maximum", float64(36500)},
		{"save_mapping", "renewal_url", "type", []any{"string", "null"}},
		{"save_mapping", "provider_product_id", "pattern", "^[A-Za-z0-9_-]{1,100}$"},
		{"save_mapping", "adds_to", "type", []any{"string", "null"}},
		{"find_licences", "state", "enum", []any{"active", "trial", "expired", "revoked"}},
		{"revoke_licence", "reason", "maxLength", float64(500)},
		{"list_webhook_deliveries", "cursor", "format", "uuid"},
	} {
		if diff := cmp.Diff(tt.want, prop(tt.tool, tt.prop)[tt.key]); diff != "" {
			t.Errorf("%s.%s %s (-want +got):\n%s", tt.tool, tt.prop, tt.key, diff)
		}
	}
	if d, _ := prop("get_licence", "id")["description"].(string); !strings.Contains(d, "licence_not_found") {
		t.Errorf("get_licence id description %q, want the document's", d)
	}
}

// TestToolAnnotations: the tools that revoke, end, remove or lower carry
// destructiveHint (a reissue revokes the old key); the reads readOnlyHint;
// other changes neither.
func TestToolAnnotations(t *testing.T) {
	e := newEnv(t, nil)
	destructive := []string{"revoke_licence", "expire_licence", "reissue_licence", "deactivate_activation", "delete_mapping",
		"drop_held_order", "revoke_invitation", "remove_member", "change_member_role"}
	for name, tl := range ownerTools(t, e) {
		a := tl.Annotations
		if a == nil {
			t.Errorf("%s: no annotations", name)
			continue
		}
		wantRead, wantDestructive := slices.Contains(readTools, name), slices.Contains(destructive, name)
		gotDestructive := a.DestructiveHint != nil && *a.DestructiveHint
		if a.ReadOnlyHint != wantRead || gotDestructive != wantDestructive {
			t.Errorf("%s: readOnlyHint %v destructiveHint %v, want %v %v", name, a.ReadOnlyHint, gotDestructive, wantRead, wantDestructive)
		}
		// destructiveHint defaults to true: a change that is not destructive
		// must say false.
		if !wantRead && a.DestructiveHint == nil {
			t.Errorf("%s: destructiveHint unset", name)
		}
	}
}

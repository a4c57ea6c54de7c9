package mcpserver

import (
	"github.com/licentia/licentia/internal/admin"
)

// effect is what a tool does to the organization, for the MCP annotations
// clients show before a call.
type effect int

const (
	reads       effect = iota // readOnlyHint
	adds                      // a change that removes or ends nothing
	destructive               // destructiveHint: revokes, ends, removes or lowers
)

// pathArg names a path value of a route as a tool argument: the route's
// own id is `id`, anything else `<kind>_id`.
type pathArg struct {
	param, arg string
}

// tool is one administration operation offered to an AI assistant: the
// route it calls and how its arguments map onto that route's path, query
// and body.
type tool struct {
	name, title string
	method      string
	path        string
	args        []pathArg
	// in is the operation's request struct: its json fields are the body,
	// its query fields the query string. Nil when the route reads neither.
	in any
	// query names query parameters the route reads without a request
	// struct.
	query      []string
	effect     effect
	idempotent bool
	// mails is set when the tool reaches outside the service.
	mails bool
	// csv is set when the route answers a CSV file, which the tool gives
	// as text, cut after maxCSVRows rows.
	csv bool
}

// pattern is the route's pattern in the API's route table.
func (t *tool) pattern() string { return t.method + " " + t.path }

var (
	byID          = []pathArg{{"id", "id"}}
	byIntegration = []pathArg{{"id", "integration_id"}}
	byMapping     = []pathArg{{"id", "integration_id"}, {"providerProductId", "provider_product_id"}}
	byFeature     = []pathArg{{"id", "id"}, {"code", "code"}}
)

// tools are every tool (tools/list gives them by name): one per
// administration operation an assistant may be given. There is no tool for
// the routes no assistant may call (anonymising, product writes, adding,
// changing or removing a webhook endpoint or replacing its secret), nor for
// the purchase lookup or the activation routes, which are not the maker's.
// The feature catalogue's writes need products:write, which no assistant
// holds: their tools are listed for no assistant (see Server.visible), and
// are there for the day a role may hold it.
var tools = []*tool{
	{name: "get_organization", title: "Get the organization", method: "GET", path: "/v1/admin/organization"},
	{name: "list_products", title: "List products", method: "GET", path: "/v1/admin/products"},
	{name: "get_product", title: "Get a product", method: "GET", path: "/v1/admin/products/{id}", args: byID},
	{name: "list_product_features", title: "List a product's features", method: "GET", path: "/v1/admin/products/{id}/features", args: byID},
	{name: "save_product_feature", title: "Add or rename a product's feature", method: "PUT", path: "/v1/admin/products/{id}/features/{code}",
		args: byFeature, in: admin.FeatureSave{}, effect: adds, idempotent: true},
	{name: "delete_product_feature", title: "Delete a product's feature", method: "DELETE", path: "/v1/admin/products/{id}/features/{code}",
		args: byFeature, effect: destructive, idempotent: true},

	{name: "find_licences", title: "Find licences", method: "GET", path: "/v1/admin/licences", in: admin.FindQuery{}},
	{name: "list_licences", title: "List licences, newest first, a page at a time", method: "GET", path: "/v1/admin/licences/list",
		in: admin.ListQuery{}},
	{name: "export_licences", title: "Export licences as CSV (at most 10,000 rows)", method: "GET", path: "/v1/admin/licences/export",
		in: admin.LicenceFilters{}, csv: true},
	{name: "count_licences", title: "Count licences", method: "GET", path: "/v1/admin/licences/counts", in: admin.CountQuery{}},
	{name: "get_licence", title: "Get a licence", method: "GET", path: "/v1/admin/licences/{id}", args: byID},
	{name: "get_licence_audit", title: "Get a licence's audit log", method: "GET", path: "/v1/admin/licences/{id}/audit", args: byID},
	{name: "issue_licence", title: "Issue a licence", method: "POST", path: "/v1/admin/licences", in: admin.NewLicence{}, effect: adds},
	{name: "revoke_licence", title: "Revoke a licence", method: "POST", path: "/v1/admin/licences/{id}/revoke", args: byID,
		in: admin.ChangeStatus{}, effect: destructive, idempotent: true},
	{name: "expire_licence", title: "Expire a licence", method: "POST", path: "/v1/admin/licences/{id}/expire", args: byID,
		in: admin.ChangeStatus{}, effect: destructive, idempotent: true},
	{name: "reinstate_licence", title: "Reinstate a licence", method: "POST", path: "/v1/admin/licences/{id}/reinstate", args: byID,
		in: admin.ChangeStatus{}, effect: adds, idempotent: true},
	{name: "reissue_licence", title: "Reissue a licence's key", method: "POST", path: "/v1/admin/licences/{id}/reissue", args: byID,
		in: admin.Reissue{}, effect: destructive},
	{name: "send_licence_key", title: "Mail a licence's key to its customer", method: "POST", path: "/v1/admin/licences/{id}/send-key",
		args: byID, in: admin.SendKeyRequest{}, effect: adds, mails: true},
	{name: "deactivate_activation", title: "Free a machine's seat", method: "POST", path: "/v1/admin/activations/{id}/deactivate", args: byID,
		effect: destructive, idempotent: true},

	{name: "list_integrations", title: "List payment-provider integrations", method: "GET", path: "/v1/admin/integrations"},
	{name: "list_mappings", title: "List an integration's product mappings", method: "GET", path: "/v1/admin/integrations/{id}/mappings",
		args: byIntegration},
	{name: "save_mapping", title: "Save a product mapping", method: "PUT", path: "/v1/admin/integrations/{id}/mappings/{providerProductId}",
		args: byMapping, in: admin.PutMapping{}, effect: adds, idempotent: true},
	{name: "delete_mapping", title: "Delete a product mapping", method: "DELETE", path: "/v1/admin/integrations/{id}/mappings/{providerProductId}",
		args: byMapping, effect: destructive, idempotent: true},
	{name: "list_held_orders", title: "List held orders", method: "GET", path: "/v1/admin/orders/held"},
	{name: "release_held_order", title: "Release a held order with corrections", method: "POST", path: "/v1/admin/orders/held/{id}/release",
		args: byID, in: admin.HeldRelease{}, effect: adds, mails: true},
	{name: "drop_held_order", title: "Drop a held order", method: "DELETE", path: "/v1/admin/orders/held/{id}", args: byID,
		effect: destructive},

	{name: "list_webhook_endpoints", title: "List webhook endpoints", method: "GET", path: "/v1/admin/webhooks"},
	{name: "get_webhook_endpoint", title: "Get a webhook endpoint", method: "GET", path: "/v1/admin/webhooks/{id}", args: byID},
	{name: "list_webhook_deliveries", title: "List a webhook endpoint's deliveries", method: "GET", path: "/v1/admin/webhooks/{id}/deliveries",
		args: byID, query: []string{"cursor"}},
	{name: "retry_webhook_delivery", title: "Retry a webhook delivery", method: "POST", path: "/v1/admin/webhooks/{id}/deliveries/{deliveryId}/retry",
		args: []pathArg{{"id", "id"}, {"deliveryId", "delivery_id"}}, effect: adds},

	{name: "list_members", title: "List team members", method: "GET", path: "/v1/admin/members"},
	{name: "list_invitations", title: "List pending invitations", method: "GET", path: "/v1/admin/invitations"},
	{name: "invite_member", title: "Invite a team member", method: "POST", path: "/v1/admin/invitations", in: admin.NewInvitation{},
		effect: adds, mails: true},
	{name: "revoke_invitation", title: "Revoke an invitation", method: "POST", path: "/v1/admin/invitations/{id}/revoke", args: byID,
		effect: destructive, idempotent: true},
	{name: "change_member_role", title: "Change a member's role", method: "PUT", path: "/v1/admin/members/{id}/role", args: byID,
		in: admin.ChangeRole{}, effect: destructive, idempotent: true},
	{name: "remove_member", title: "Remove a team member", method: "DELETE", path: "/v1/admin/members/{id}", args: byID,
		effect: destructive, idempotent: true},
}

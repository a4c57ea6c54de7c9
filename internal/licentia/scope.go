package licentia

import "slices"

// Scope is a permission an API key holds.
type Scope string

// The contract's scopes.
const (
	ScopeProductsRead      Scope = "products:read"
	ScopeProductsWrite     Scope = "products:write"
	ScopeLicencesRead      Scope = "licences:read"
	ScopeLicencesWrite     Scope = "licences:write"
	ScopeLicencesAnonymise Scope = "licences:anonymise"
	ScopeAuditRead         Scope = "audit:read"
	ScopeProviderRead      Scope = "provider:read"
	ScopeProviderWrite     Scope = "provider:write"
	ScopeOrganizationRead  Scope = "organization:read"
	ScopeMembersRead       Scope = "members:read"
	ScopeMembersWrite      Scope = "members:write"
	ScopeWebhooksRead      Scope = "webhooks:read"
	ScopeWebhooksWrite     Scope = "webhooks:write"
)

// Scopes lists every scope in the contract's order.
var Scopes = []Scope{
	ScopeProductsRead, ScopeProductsWrite, ScopeLicencesRead, ScopeLicencesWrite,
	ScopeLicencesAnonymise, ScopeAuditRead, ScopeProviderRead, ScopeProviderWrite,
	ScopeOrganizationRead, ScopeMembersRead, ScopeMembersWrite, ScopeWebhooksRead,
	ScopeWebhooksWrite,
}

// IsKeyScope reports whether an API key may hold s. No key holds
// members:write: team changes are made only by a member, so a key never
// succeeds on the team-changing routes.
func IsKeyScope(s Scope) bool {
	return s != ScopeMembersWrite && slices.Contains(Scopes, s)
}

package licentia

import (
	"fmt"
	"slices"
)

// Roles lists every role, lowest first. Each role holds every scope of the
// roles before it.
var Roles = []Role{RoleViewer, RoleSupport, RoleDeveloper, RoleAdmin, RoleOwner}

// scopeRole is the lowest role holding each scope: viewer holds every :read
// scope, support adds licences:write, developer adds the product, provider
// and webhook writes, admin adds anonymising and the team.
var scopeRole = map[Scope]Role{
	ScopeProductsRead:      RoleViewer,
	ScopeLicencesRead:      RoleViewer,
	ScopeAuditRead:         RoleViewer,
	ScopeProviderRead:      RoleViewer,
	ScopeOrganizationRead:  RoleViewer,
	ScopeMembersRead:       RoleViewer,
	ScopeWebhooksRead:      RoleViewer,
	ScopeLicencesWrite:     RoleSupport,
	ScopeProductsWrite:     RoleDeveloper,
	ScopeProviderWrite:     RoleDeveloper,
	ScopeWebhooksWrite:     RoleDeveloper,
	ScopeLicencesAnonymise: RoleAdmin,
	ScopeMembersWrite:      RoleAdmin,
}

// ParseRole returns the role named s, matched exactly. It reports false for
// any other string.
func ParseRole(s string) (Role, bool) {
	r := Role(s)
	return r, r.Valid()
}

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r.Rank() > 0 }

// Rank is r's place in the order, 1 for viewer up to 5 for owner, and 0 for
// a string that is not a role.
func (r Role) Rank() int { return slices.Index(Roles, r) + 1 }

// AtLeast reports whether r is a role and ranks at or above other.
func (r Role) AtLeast(other Role) bool { return r.Valid() && r.Rank() >= other.Rank() }

// HasScope reports whether a member with role r holds s.
func (r Role) HasScope(s Scope) bool {
	lowest, ok := scopeRole[s]
	return ok && r.AtLeast(lowest)
}

// Scopes returns the scopes r holds, sorted, in a slice the caller owns. It
// is empty for a string that is not a role.
func (r Role) Scopes() []Scope {
	out := []Scope{}
	for _, s := range Scopes {
		if r.HasScope(s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// CanConnectIntegrations reports whether r may connect a provider
// integration: admin and owner.
func (r Role) CanConnectIntegrations() bool { return r.AtLeast(RoleAdmin) }

// CanManageAPIKeys reports whether r may create and revoke API keys: owner
// only.
func (r Role) CanManageAPIKeys() bool { return r.AtLeast(RoleOwner) }

// CanManagePlan reports whether r may change the organization's plan: owner
// only.
func (r Role) CanManagePlan() bool { return r.AtLeast(RoleOwner) }

// CheckGivenRole returns a message when s cannot be given in an invitation
// or a role change, or "" when it can. Owner is never given.
func CheckGivenRole(s string) string {
	r, ok := ParseRole(s)
	switch {
	case !ok:
		return "must be one of viewer, support, developer, admin"
	case r == RoleOwner:
		return "owner is never given: must be one of viewer, support, developer, admin"
	}
	return ""
}

// insufficientRole is the 403 for a caller whose role does not allow a team
// action; details.role names the caller's role.
func insufficientRole(caller Role, format string, args ...any) *Error {
	return &Error{
		Code:    CodeInsufficientRole,
		Message: fmt.Sprintf(format, args...),
		Details: map[string]any{"role": string(caller)},
	}
}

// CanInvite decides whether a member with role caller may invite someone as
// role: 403 insufficient_role without members:write or when role is above
// the caller's own, and 400 validation_failed at /role for owner or a string
// that is not a role.
func CanInvite(caller, role Role) error {
	return CanChangeMember(caller, "", &role, false)
}

// CanChangeMember decides whether a member with role caller may act on a
// member with role target: remove them when newRole is nil, or give them
// newRole. self is true when the target is the caller. An empty target
// stands for an invitation, which has no member yet. In order:
//   - caller without members:write: 403 insufficient_role;
//   - newRole owner or not a role: 400 validation_failed at /role;
//   - acting on oneself or on an owner: 403 forbidden;
//   - target or newRole above the caller's own: 403 insufficient_role.
func CanChangeMember(caller, target Role, newRole *Role, self bool) error {
	if !caller.HasScope(ScopeMembersWrite) {
		return insufficientRole(caller, "The %s role cannot change the team.", caller)
	}
	if newRole != nil {
		if msg := CheckGivenRole(string(*newRole)); msg != "" {
			var is Issues
			is.Add("/role", "%s", msg)
			return is.Err()
		}
	}
	if self {
		return Errorf(CodeForbidden, "A member cannot change or remove themselves.")
	}
	if target == RoleOwner {
		return Errorf(CodeForbidden, "An owner cannot be changed or removed.")
	}
	if target != "" && !caller.AtLeast(target) {
		return insufficientRole(caller, "The %s role cannot act on a member with the %s role.", caller, target)
	}
	if newRole != nil && !caller.AtLeast(*newRole) {
		return insufficientRole(caller, "The %s role cannot give the %s role.", caller, *newRole)
	}
	return nil
}

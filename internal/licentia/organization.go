package licentia

import (
	"regexp"
	"time"
)

// Organization owns products, licences, keys and a team.
type Organization struct {
	ID        string
	Name      string
	Slug      string
	Plan      PlanID
	CreatedAt time.Time
	// Branding is what customers see of the organization.
	Branding Branding
}

// Role is a member's role. Roles are ordered so that nobody acts above their
// own; role.go holds what each one may do.
type Role string

// Roles, lowest first.
const (
	RoleViewer    Role = "viewer"
	RoleSupport   Role = "support"
	RoleDeveloper Role = "developer"
	RoleAdmin     Role = "admin"
	RoleOwner     Role = "owner"
)

// Member is a person on an organization's team.
type Member struct {
	ID        string
	OrgID     string
	Email     string
	Role      Role
	CreatedAt time.Time
}

// Invitation invites an address to join the team. It is pending until it is
// accepted, revoked or past its expiry.
type Invitation struct {
	ID         string
	OrgID      string
	Email      string
	Role       Role
	ExpiresAt  time.Time
	CreatedAt  time.Time
	AcceptedAt *time.Time
	RevokedAt  *time.Time
	// TokenHash is the SHA-256 of the link's token; nil on invitations no
	// link can accept.
	TokenHash []byte
	// InvitedBy is the member who sent it, when a member did.
	InvitedBy *string
}

// Pending reports whether inv can still be accepted at now.
func (inv *Invitation) Pending(now time.Time) bool {
	return inv.AcceptedAt == nil && inv.RevokedAt == nil && now.Before(inv.ExpiresAt)
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// ValidateOrganization checks the fields of a new organization.
func ValidateOrganization(name, slug string, plan PlanID, plans Plans, ownerEmail string) error {
	var is Issues
	if msg := CheckName(name); msg != "" {
		is.Add("name", "%s", msg)
	}
	if !slugRE.MatchString(slug) {
		is.Add("slug", "must be 1 to 63 lowercase letters, digits and hyphens, not starting with a hyphen")
	}
	if _, ok := plans[plan]; !ok {
		is.Add("plan", "must be one of free, indie, studio, business")
	}
	// The owner is a member the service mails (setup and sign-in links).
	if msg := CheckMailableEmail(ownerEmail); msg != "" {
		is.Add("owner_email", "%s", msg)
	}
	return is.Err()
}

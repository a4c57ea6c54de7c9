package licentia

import (
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Branding is how an organization shows itself to its customers, on every
// page and mail they see. Nil fields are not set.
type Branding struct {
	// DisplayName is the name customers read; nil shows the
	// organization's name.
	DisplayName *string
	// SupportEmail is where customers' replies go (Reply-To).
	SupportEmail *string
	// LogoURL is an https image shown above pages and mails.
	LogoURL *string
	// Accent is a colour, #rrggbb in lower case.
	Accent *string
}

// Branding limits.
const (
	MaxDisplayName = 100
	MaxLogoURL     = 2048
)

// DisplayName is the name customers see: the branding's display name, or
// the organization's name when none is set.
func (o *Organization) DisplayName() string {
	if o.Branding.DisplayName != nil {
		return *o.Branding.DisplayName
	}
	return o.Name
}

// CheckDisplayName returns why s is not an acceptable display name, or "".
func CheckDisplayName(s string) string {
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxDisplayName || strings.TrimSpace(s) == "" {
		return "must be 1 to 100 characters"
	}
	if HasControl(s) {
		return "must not contain control characters"
	}
	return ""
}

// CheckLogoURL returns why s is not an acceptable logo address, or "": an
// absolute https URL with a host, at most 2048 characters. Pages embed it,
// and mail clients fetch it; anything but https would be mixed content or
// an address a customer's mail client is told to fetch in the clear.
func CheckLogoURL(s string) string {
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxLogoURL {
		return "must be 1 to 2048 characters"
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 }) {
		return "must not contain spaces or control characters"
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Hostname() == "" || u.User != nil {
		return "must be an https address"
	}
	return ""
}

var accentRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// CheckAccent returns why s is not a colour #rrggbb, or "".
func CheckAccent(s string) string {
	if !accentRE.MatchString(s) {
		return "must be a colour written #rrggbb"
	}
	return ""
}

// CanSetBranding decides whether a member with role caller may change the
// organization's branding: owners and admins may, others get 403
// insufficient_role. No API key may: branding is not a scope.
func CanSetBranding(caller Role) error {
	if caller.CanChangeBranding() {
		return nil
	}
	return insufficientRole(caller, "The %s role cannot change what customers see of the organization.", caller)
}

// CanChangeBranding reports whether r may change the branding: admin and
// owner.
func (r Role) CanChangeBranding() bool { return r.AtLeast(RoleAdmin) }

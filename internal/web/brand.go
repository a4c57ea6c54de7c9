package web

import (
	"net/url"
	"strings"

	"github.com/licentia/licentia/internal/licentia"
)

// AllowLogo widens policy's img-src to the origin of an organization's
// logo, so a page a customer sees can show it and nothing else from
// outside: logos are https (checked when branding is set), and any other
// address leaves policy as it is.
func AllowLogo(policy, logoURL string) string {
	u, err := url.Parse(logoURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return policy
	}
	return strings.Replace(policy, "img-src 'self'", "img-src 'self' https://"+u.Host, 1)
}

// Brand is what a page a customer sees shows of the organization behind
// it: its name, logo, accent and support address, never the service's own
// name but in a "powered by" line. The zero Brand names no organization
// (a page before the organization is known).
type Brand struct {
	Slug         string
	Name         string
	LogoURL      string
	SupportEmail string
	HasAccent    bool
}

// BrandOf is the branding of o.
func BrandOf(o *licentia.Organization) *Brand {
	b := &Brand{Slug: o.Slug, Name: o.DisplayName(), HasAccent: o.Branding.Accent != nil}
	if v := o.Branding.LogoURL; v != nil {
		b.LogoURL = *v
	}
	if v := o.Branding.SupportEmail; v != nil {
		b.SupportEmail = *v
	}
	return b
}

// Base is the organization's customer portal path.
func (b *Brand) Base() string { return "/portal/" + url.PathEscape(b.Slug) + "/" }

// Style is the organization's accent stylesheet (served by the portal),
// "" when it set no accent: pages carry no inline style.
func (b *Brand) Style() string {
	if !b.HasAccent {
		return ""
	}
	return b.Base() + "brand.css"
}

package console

import (
	"net/url"

	"github.com/licentia/licentia/internal/licentia"
)

// customerBrand is what a customer's page shows of the organization
// behind it: its name, logo, accent and support address, never the
// console's own name but in a "powered by" line. Before a purchase is
// found the organization is not known, and the page names none.
type customerBrand struct {
	Name         string
	LogoURL      string
	SupportEmail string
	// Style is the organization's accent stylesheet (the portal's), ""
	// when it set no accent; pages carry no inline style.
	Style string
}

func brandFor(o *licentia.Organization) *customerBrand {
	if o == nil {
		return &customerBrand{}
	}
	b := &customerBrand{Name: o.DisplayName()}
	if v := o.Branding.LogoURL; v != nil {
		b.LogoURL = *v
	}
	if v := o.Branding.SupportEmail; v != nil {
		b.SupportEmail = *v
	}
	if o.Branding.Accent != nil {
		b.Style = "/portal/" + url.PathEscape(o.Slug) + "/brand.css"
	}
	return b
}

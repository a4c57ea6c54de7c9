package console

import (
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// brandFor is the branding a customer's page wears: the organization's,
// or none before the organization is known.
func brandFor(o *licentia.Organization) *web.Brand {
	if o == nil {
		return &web.Brand{}
	}
	return web.BrandOf(o)
}

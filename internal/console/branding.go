package console

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// branding is what a member's role must allow to change the branding: no
// scope holds it, so no API key ever may.
var branding = need{what: "change the branding", ok: licentia.Role.CanChangeBranding}

type brandingPage struct {
	Org *licentia.Organization
}

// brandingSettings shows what customers see of the organization, and to
// owners and admins the form that changes it.
func (s *Server) brandingSettings(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showBranding(w, r, v, nil)
}

func (s *Server) showBranding(w http.ResponseWriter, r *http.Request, v *visit, p *problem) error {
	org, err := s.admin.Organization(r.Context(), v.orgID())
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "branding", &view{Title: "Branding", Section: "branding", Visit: v, Notice: notice(r),
		Data: brandingPage{Org: org.Organization}, problem: p})
}

// saveBranding replaces the branding with the form's fields; a blank field
// is not set.
func (s *Server) saveBranding(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.BrandingChange
	decodeForm(r.PostForm, &in)
	_, err := s.admin.SetBranding(r.Context(), v.acting(), in)
	if p := refusal("branding", r, err); p != nil {
		return s.showBranding(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/branding", "branding-saved")
}

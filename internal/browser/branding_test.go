package browser

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/licentia/licentia/internal/servetest"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestBrandingInBrowser: the owner sets the branding with the plain form,
// sees a refusal next to its field, and the page fits a 390-pixel-wide
// phone screen with no horizontal scrolling, long logo address and all.
func TestBrandingInBrowser(t *testing.T) {
	b := browser(t)
	t.Run("sqlite", func(t *testing.T) { walkBranding(t, b, servetest.Start(t, ""), true) })
	t.Run("postgres", func(t *testing.T) { walkBranding(t, b, servetest.Start(t, storetest.PostgresURL(t)), false) })
}

func walkBranding(t *testing.T, b context.Context, s *servetest.Service, save bool) {
	org := s.Operator(t, "org", "create", "--name", "Acme Software", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	owner := person(t, b)
	open(t, owner, org["setup_url"].(string))
	if status := submit(t, owner, "form", map[string]string{"password": "correct horse battery"}); status != http.StatusOK {
		t.Fatalf("setting the password: status %d", status)
	}
	open(t, owner, s.Base+"/console/branding")
	form := `form[action="/console/branding"]`
	if status := submit(t, owner, form, map[string]string{"display_name": "Acme Tools", "logo_url": "http://acme.example/logo.png"}); status != http.StatusBadRequest {
		t.Fatalf("a refused logo address: status %d, want 400", status)
	}
	if got := text(t, owner, ".field-error"); !strings.Contains(got, "https") {
		t.Errorf("field error = %q, want the logo's rule", got)
	}
	logo := "https://cdn.acme.example/brand/" + strings.Repeat("very-long-path-segment/", 12) + "logo.png"
	if status := submit(t, owner, form, map[string]string{"display_name": "Acme Tools", "support_email": "help@acme.example",
		"logo_url": logo, "accent": "#0a7cff"}); status != http.StatusOK {
		t.Fatalf("save branding: status %d", status)
	}
	if got := text(t, owner, "p.notice"); !strings.Contains(got, "branding was saved") {
		t.Errorf("notice = %q", got)
	}
	shot(t, owner, save, "branding")
	if _, err := chromedp.Run(owner, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	open(t, owner, s.Base+"/console/branding")
	fits(t, owner, "the branding page", 390)
	shot(t, owner, save, "branding-phone")
}

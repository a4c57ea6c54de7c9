package browser

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/licentia/licentia/internal/servetest"
)

// TestFloatingUseInBrowser: the owner sets a product's floating use on
// its page (a refusal shows next to its field), a licence's page shows
// the lease a machine took against the limit and the transfers of the
// last 30 days, and both pages fit a 390-pixel-wide phone screen with no
// horizontal scrolling.
func TestFloatingUseInBrowser(t *testing.T) {
	b := browser(t)
	walkFloating(t, b, servetest.Start(t, ""), true)
}

func walkFloating(t *testing.T, b context.Context, s *servetest.Service, save bool) {
	org := s.Operator(t, "org", "create", "--name", "Acme Software", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	key := s.Operator(t, "apikey", "create", "--org", "acme", "--name", "backend", "--scopes", "products:read,products:write,licences:read,licences:write")["key"].(string)
	owner := person(t, b)
	open(t, owner, org["setup_url"].(string))
	if status := submit(t, owner, "form", map[string]string{"password": "correct horse battery"}); status != http.StatusOK {
		t.Fatalf("setting the password: status %d", status)
	}
	if status, body := api(t, s, "POST", "/v1/admin/products", key, map[string]any{"id": "cad-suite", "name": "CAD Suite", "key_prefix": "CAD",
		"current_major": 1}); status != http.StatusCreated {
		t.Fatalf("create product: %d %v", status, body)
	}
	open(t, owner, s.Base+"/console/products/cad-suite")
	form := `form[action="/console/products/cad-suite"]`
	// The browser checks the field's range itself; the server's refusal is
	// what a browser that does not check shows.
	if _, err := chromedp.Run(owner, chromedp.Evaluate[bool](`document.querySelector('`+form+`').noValidate = true`)); err != nil {
		t.Fatal(err)
	}
	if status := submit(t, owner, form, map[string]string{"max_concurrent": "0"}); status != http.StatusBadRequest {
		t.Fatalf("max_concurrent 0: status %d, want 400", status)
	}
	if got := text(t, owner, ".field-error"); !strings.Contains(got, "1 to 100000") {
		t.Errorf("field error = %q, want max_concurrent's range", got)
	}
	if status := submit(t, owner, form, map[string]string{"max_concurrent": "2", "lease_ttl_seconds": "600", "max_borrow_hours": "24",
		"transfers_per_30_days": "3"}); status != http.StatusOK {
		t.Fatalf("save floating use: status %d", status)
	}
	if got := text(t, owner, "table.facts"); !strings.Contains(got, "2 per licence") || !strings.Contains(got, "600 seconds, borrowed up to 24 hours") {
		t.Errorf("product facts = %q, want the saved settings", got)
	}
	shot(t, owner, save, "product-floating")

	status, issued := api(t, s, "POST", "/v1/admin/licences", key, map[string]any{"product_id": "cad-suite", "email": "studio@example.com", "limit_count": 2})
	if status != http.StatusCreated {
		t.Fatalf("issue: %d %v", status, issued)
	}
	licenceKey := issued["licence_key"].(string)
	id := issued["licence"].(map[string]any)["id"].(string)
	machine := "workstation-" + strings.Repeat("long-name-", 8)
	if status, body := api(t, s, "POST", "/v1/activations", "", map[string]any{"licence_key": licenceKey, "machine_id": machine,
		"label": "Studio", "os": "linux", "app_version": "1.0.0"}); status != http.StatusCreated {
		t.Fatalf("activate: %d %v", status, body)
	}
	if status, body := api(t, s, "POST", "/v1/leases", "", map[string]any{"licence_key": licenceKey, "machine_id": machine}); status != http.StatusCreated {
		t.Fatalf("lease: %d %v", status, body)
	}
	open(t, owner, s.Base+"/console/licences/"+id)
	got := text(t, owner, "main")
	for _, want := range []string{"1 in use of 2", "0 in the last 30 days of 3 allowed", machine} {
		if !strings.Contains(got, want) {
			t.Errorf("licence page lacks %q", want)
		}
	}
	shot(t, owner, save, "licence-floating")

	if _, err := chromedp.Run(owner, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"/console/products/cad-suite", "/console/licences/" + id} {
		open(t, owner, s.Base+page)
		wide, err := chromedp.Run(owner, chromedp.Evaluate[int]("document.documentElement.scrollWidth"))
		if err != nil {
			t.Fatal(err)
		}
		if wide > 390 {
			t.Errorf("%s is %d pixels wide on a 390-pixel screen", page, wide)
		}
	}
	shot(t, owner, save, "licence-floating-phone")
}

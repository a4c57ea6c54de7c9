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

// TestFeaturesInBrowser walks a product's features as the owner meets
// them, on SQLite and on PostgreSQL: features added on the product's page
// (a bad code refused next to its field), a licence issued with two of
// them, one's expiry changed on the licence's page, and its deletion
// refused while the licence grants it. Every page fits a 1280- and a
// 390-pixel-wide screen without horizontal scrolling.
func TestFeaturesInBrowser(t *testing.T) {
	b := browser(t)
	t.Run("sqlite", func(t *testing.T) { walkFeatures(t, b, servetest.Start(t, ""), true) })
	t.Run("postgres", func(t *testing.T) { walkFeatures(t, b, servetest.Start(t, storetest.PostgresURL(t)), false) })
}

func walkFeatures(t *testing.T, b context.Context, s *servetest.Service, save bool) {
	org := s.Operator(t, "org", "create", "--name", "Acme Software", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	owner := person(t, b)
	open(t, owner, org["setup_url"].(string))
	if status := submit(t, owner, "form", map[string]string{"password": "correct horse battery"}); status != http.StatusOK {
		t.Fatalf("setting the password: status %d", status)
	}
	open(t, owner, s.Base+"/console/products")
	if status := submit(t, owner, `form[action="/console/products"]`, map[string]string{
		"id": "desk-app", "name": "Desk App", "key_prefix": "DESK", "current_major": "2"}); status != http.StatusOK {
		t.Fatalf("create product: status %d", status)
	}
	productURL := s.Base + "/console/products/desk-app"

	// Features on the product's page; a bad code is refused by its field.
	add := `form[action="/console/products/desk-app/features"]`
	if status := submit(t, owner, add, map[string]string{"code": "Export PDF", "name": "Export to PDF"}); status != http.StatusBadRequest {
		t.Fatalf("a bad code: status %d, want 400", status)
	}
	if got := text(t, owner, add+" .field-error"); !strings.Contains(got, "a-z, 0-9") {
		t.Errorf("field error = %q, want the code's rule", got)
	}
	shot(t, owner, save, "feature-refused")
	for code, name := range map[string]string{"export-pdf": "Export to PDF", "pro": "Pro tools", "sso": "Single sign-on for teams"} {
		if status := submit(t, owner, add, map[string]string{"code": code, "name": name}); status != http.StatusOK {
			t.Fatalf("add %s: status %d", code, status)
		}
	}
	if n := count(t, owner, `form[action="/console/products/desk-app/features/delete"]`); n != 3 {
		t.Errorf("%d features listed, want 3", n)
	}
	screens(t, owner, save, productURL, "product-features")

	// A licence issued with two features, one until a date.
	open(t, owner, s.Base+"/console/licences")
	issue := `form[action="/console/licences"][method="post"]`
	if err := chromedp.Do(owner,
		chromedp.Click(chromedp.CSS(issue+` input[name="feature"][value="desk-app:export-pdf"]`)),
		chromedp.Click(chromedp.CSS(issue+` input[name="feature"][value="desk-app:pro"]`)),
	); err != nil {
		t.Fatalf("tick features: %v", err)
	}
	if status := submit(t, owner, issue, map[string]string{"product_id": "desk-app", "email": "buyer@example.com",
		"limit_count": "2", "feature_expires:desk-app:pro": "2027-06-30T12:00"}); status != http.StatusOK {
		t.Fatalf("issue: status %d", status)
	}
	licenceURL := strings.Split(location(t, owner), "?")[0]
	licenceID := licenceURL[strings.LastIndex(licenceURL, "/")+1:]
	features := text(t, owner, "#features + table")
	for _, want := range []string{"Export to PDF", "as long as the licence", "Pro tools", "2027-06-30 12:00 UTC"} {
		if !strings.Contains(features, want) {
			t.Errorf("the licence's features lack %q:\n%s", want, features)
		}
	}
	if strings.Contains(features, "Single sign-on") {
		t.Errorf("the licence shows a feature it was not granted:\n%s", features)
	}
	screens(t, owner, save, s.Base+"/console/licences", "licences-issue-features")

	// One feature's expiry changed on the licence's page.
	open(t, owner, licenceURL)
	change := `form[action="/console/licences/` + licenceID + `/features"]`
	if status := submit(t, owner, change, map[string]string{"feature_expires:desk-app:pro": "2027-12-31T18:30"}); status != http.StatusOK {
		t.Fatalf("change the expiry: status %d", status)
	}
	if got := text(t, owner, "p.notice"); !strings.Contains(got, "features were saved") {
		t.Errorf("notice = %q", got)
	}
	features = text(t, owner, "#features + table")
	if !strings.Contains(features, "2027-12-31 18:30 UTC") || !strings.Contains(features, "Export to PDF") {
		t.Errorf("the features after the change:\n%s", features)
	}
	screens(t, owner, save, licenceURL, "licence-features")

	// Deleting a granted feature is refused, in its row.
	open(t, owner, productURL)
	del := `form[action="/console/products/desk-app/features/delete"]:has(input[value="pro"])`
	if status := step(t, owner, "delete pro", chromedp.Click(chromedp.CSS(del+` button`))); status != http.StatusConflict {
		t.Fatalf("delete a granted feature: status %d, want 409", status)
	}
	row := text(t, owner, `tr:has(input[name="code"][value="pro"])`)
	if !strings.Contains(row, "A licence grants this feature") {
		t.Errorf("the refused row reads %q", row)
	}
	shot(t, owner, save, "feature-delete-refused")
	fits(t, owner, "the refused delete", 1280)
	if _, err := chromedp.Run(owner, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	fits(t, owner, "the refused delete", 390)
	shot(t, owner, save, "feature-delete-refused-phone")
	if _, err := chromedp.Run(owner, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
}

// screens opens url at 1280 and at 390 pixels wide, wants no horizontal
// scrolling at either, and saves both as name and name-phone.
func screens(t *testing.T, ctx context.Context, save bool, url, name string) {
	t.Helper()
	for _, w := range []struct {
		width, height int64
		suffix        string
	}{{1280, 900, ""}, {390, 844, "-phone"}} {
		if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(w.width, w.height)); err != nil {
			t.Fatal(err)
		}
		open(t, ctx, url)
		fits(t, ctx, name, w.width)
		shot(t, ctx, save, name+w.suffix)
	}
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
}

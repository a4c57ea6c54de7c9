package browser

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/servetest"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
)

// widths are the viewports every page must fit: a phone and a laptop.
var widths = []int64{390, 1280}

// TestEveryPageFits visits every console page, the customer page, the
// portal and the signed-out pages at 390 and 1280 pixels wide, on SQLite
// and on PostgreSQL, and wants the document exactly as wide as the
// viewport: nothing scrolls sideways. On SQLite it saves a screenshot of
// each page at each width, under stable names, for people to look at.
func TestEveryPageFits(t *testing.T) {
	b := browser(t)
	t.Run("sqlite", func(t *testing.T) { everyPage(t, b, servetest.Start(t, ""), true) })
	t.Run("postgres", func(t *testing.T) { everyPage(t, b, servetest.Start(t, storetest.PostgresURL(t)), false) })
}

func everyPage(t *testing.T, b context.Context, s *servetest.Service, save bool) {
	org := s.Operator(t, "org", "create", "--name", "Acme Software", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	owner := person(t, b)
	open(t, owner, org["setup_url"].(string))
	if status := submit(t, owner, "form", map[string]string{"password": "correct horse battery"}); status != http.StatusOK {
		t.Fatalf("setting the password: status %d", status)
	}
	// The overview of a new organization, its first steps all to do.
	pages := []page{{"overview-new", "/console/"}}
	visit(t, owner, s, save, pages)

	open(t, owner, s.Base+"/console/products")
	if status := submit(t, owner, `form[action="/console/products"]`, map[string]string{
		"id": "desk-app", "name": "Desk App for Designers and Architects", "key_prefix": "DESK", "current_major": "2"}); status != http.StatusOK {
		t.Fatalf("create product: status %d", status)
	}
	// Two features, for the mapping below to grant.
	for code, name := range map[string]string{"export-pdf": "Export to PDF", "team-sync": "Team synchronisation"} {
		open(t, owner, s.Base+"/console/products/desk-app")
		if status := submit(t, owner, `form[action="/console/products/desk-app/features"]`, map[string]string{"code": code, "name": name}); status != http.StatusOK {
			t.Fatalf("add feature %s: status %d", code, status)
		}
	}
	open(t, owner, s.Base+"/console/api-keys")
	if err := chromedp.Do(owner,
		chromedp.SetValue(chromedp.CSS(`form[action="/console/api-keys"] [name="name"]`), "backend"),
		chromedp.Click(chromedp.CSS(`input[name="scopes"][value="licences:read"]`)),
	); err != nil {
		t.Fatal(err)
	}
	if status := step(t, owner, "create key", chromedp.Click(chromedp.CSS(`form[action="/console/api-keys"] button[type="submit"]`))); status != http.StatusCreated {
		t.Fatalf("create key: status %d", status)
	}
	open(t, owner, s.Base+"/console/licences")
	if status := submit(t, owner, `form[action="/console/licences"][method="post"]`, map[string]string{
		"product_id": "desk-app", "email": "a.very.long.customer.address@example-customer-domain.com", "limit_count": "3"}); status != http.StatusOK {
		t.Fatalf("issue: status %d", status)
	}
	licenceURL := strings.Split(location(t, owner), "?")[0]
	licenceID := licenceURL[strings.LastIndex(licenceURL, "/")+1:]
	licenceKey := text(t, owner, "table.facts code.secret")
	if status, act := api(t, s, "POST", "/v1/activations", "", map[string]any{
		"licence_key": licenceKey, "machine_id": "machine-0001-8f3a9c2e4b7d6a1f0e5c3b9a8d7f6e2c", "label": "Ada's studio workstation",
		"os": "linux", "app_version": "2.0.1"}); status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("activate: status %d %v", status, act)
	}
	open(t, owner, s.Base+"/console/webhooks")
	if err := chromedp.Do(owner,
		chromedp.SetValue(chromedp.CSS(`form[action="/console/webhooks"] [name="url"]`), "https://hooks.example.com/licentia/events/receiver"),
		chromedp.Click(chromedp.CSS(`input[name="event_types"][value="licence.issued"]`)),
	); err != nil {
		t.Fatal(err)
	}
	if status := step(t, owner, "add endpoint", chromedp.Click(chromedp.CSS(`form[action="/console/webhooks"] button[type="submit"]`))); status != http.StatusCreated {
		t.Fatalf("add endpoint: status %d", status)
	}

	// What no console form makes without a payment provider: an
	// integration, and the licence's order.
	st := s.OpenStore(t)
	o, err := st.OrganizationBySlug(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	es, err := st.WebhookEndpoints(t.Context(), o.ID)
	if err != nil || len(es) != 1 {
		t.Fatalf("WebhookEndpoints() = %v, %v", es, err)
	}
	integ := &licentia.Integration{ID: licentia.NewID(), OrgID: o.ID, Provider: "stripe", Name: "Shop", AccountID: "acct_1BrowserShop",
		Livemode: true, SealedAPIKey: []byte("sealed"), SealedWebhookSecret: []byte{}, MasterFingerprint: "0000000000000000", CreatedAt: time.Now()}
	order := "pi_3PZ7dFJk2mN8qRsT0uVwXyZa"
	err = st.InTx(t.Context(), func(tx store.Tx) error {
		if err := tx.CreateIntegration(t.Context(), integ); err != nil {
			return err
		}
		l, err := tx.LockLicence(t.Context(), o.ID, licenceID)
		if err != nil {
			return err
		}
		after := *l
		after.Provider.OrderID = &order
		if err := tx.UpdateLicence(t.Context(), &after); err != nil {
			return err
		}
		// A mapping granting both features, and a provider event it issued.
		if err := tx.PutMapping(t.Context(), &licentia.Mapping{IntegrationID: integ.ID, ProviderProductID: "prod_QdTx8RmYw3LkPz_desk_studio",
			ProductID: "desk-app", LimitKind: licentia.LimitMachines, LimitCount: 3, OnRefund: licentia.RefundRevoke,
			OnSubscriptionEnd: licentia.SubscriptionEndExpire, Features: []string{"export-pdf", "team-sync"}, SendKeyMail: true,
			CreatedAt: time.Now(), UpdatedAt: time.Now()}); err != nil {
			return err
		}
		if _, err := tx.RecordProviderEvent(t.Context(), integ.ID, "evt_1PZ7dFJk2mN8qRsT0uVwXyZa", time.Now()); err != nil {
			return err
		}
		return tx.NoteProviderEvent(t.Context(), licentia.ProviderEvent{IntegrationID: integ.ID, EventID: "evt_1PZ7dFJk2mN8qRsT0uVwXyZa",
			Type: "checkout.session.completed", Outcome: licentia.OutcomeIssued, OrderID: &order})
	})
	if err != nil {
		t.Fatalf("set up the integration and the order: %v", err)
	}

	answered(t, owner, s, save, st, o.ID, es[0].ID)

	visit(t, owner, s, save, []page{
		{"overview", "/console/"},
		{"licences", "/console/licences"},
		{"customers", "/console/customers"},
		{"licence", "/console/licences/" + licenceID},
		{"products", "/console/products"},
		{"product", "/console/products/desk-app"},
		{"api-keys", "/console/api-keys"},
		{"team", "/console/team"},
		{"integrations", "/console/integrations"},
		{"integration", "/console/integrations/" + integ.ID},
		{"webhooks", "/console/webhooks"},
		{"webhook", "/console/webhooks/" + es[0].ID},
		{"audit", "/console/audit"},
		{"assistants", "/console/assistants"},
		{"branding", "/console/branding"},
	})

	stranger := person(t, b)
	visit(t, stranger, s, save, []page{
		{"sign-in", "/console/sign-in"},
		{"forgot-password", "/console/forgot-password"},
		{"purchase-form", "/console/purchase"},
		{"portal-sign-in", "/portal/acme/"},
	})
	// Forgot password? from the sign-in page: the mailed link, read from
	// the raw .eml, sets a new password.
	open(t, stranger, s.Base+"/console/sign-in")
	if status := step(t, stranger, "forgot password", chromedp.Click(chromedp.CSS(`a[href="/console/forgot-password"]`))); status != http.StatusOK {
		t.Fatalf("Forgot password?: status %d", status)
	}
	if status := submit(t, stranger, `form[action="/console/forgot-password"]`, map[string]string{"email": "owner@acme.example"}); status != http.StatusOK {
		t.Fatalf("ask for a link: status %d", status)
	}
	if got := text(t, stranger, "main h1"); got != "Check your mail" {
		t.Errorf("after asking: %q", got)
	}
	for _, w := range widths {
		viewport(t, stranger, w)
		fits(t, stranger, "forgot-password-sent", w)
		shot(t, stranger, save, fmt.Sprintf("forgot-password-sent-%d", w))
	}
	open(t, stranger, waitForMail(t, s, setupLink))
	if status := submit(t, stranger, "form", map[string]string{"password": "a new passphrase of mine"}); status != http.StatusOK {
		t.Fatalf("set the new password: status %d", status)
	}
	if l := location(t, stranger); !strings.HasPrefix(l, s.Base+"/console/") || strings.Contains(l, "sign-in") {
		t.Errorf("after the new password: at %s", l)
	}

	// The customer page with the purchase found, at each width.
	for _, w := range widths {
		viewport(t, stranger, w)
		open(t, stranger, s.Base+"/console/purchase")
		if status := submit(t, stranger, `form[action="/console/purchase"]`, map[string]string{
			"email": "a.very.long.customer.address@example-customer-domain.com", "order_id": order}); status != http.StatusOK {
			t.Fatalf("purchase lookup: status %d", status)
		}
		fits(t, stranger, "purchase", w)
		shot(t, stranger, save, fmt.Sprintf("purchase-%d", w))
	}
}

var setupLink = regexp.MustCompile(`(?m)^http://127\.0\.0\.1:\d+/console/setup/[0-9A-Za-z_-]{43}\r?$`)

// waitForMail waits for the courier to write a mail holding a line that
// is a link matching link, and returns the link as the raw .eml has it.
func waitForMail(t *testing.T, s *servetest.Service, link *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(s.Dir, "outbox", "*.eml"))
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if l := link.FindString(string(raw)); l != "" {
				return strings.TrimSpace(l)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no mail with the link in the outbox")
	return ""
}

// page is a page to visit: its screenshot's name and its path.
type page struct{ name, path string }

// visit opens each page at each width, wants it to fit, and saves its
// screenshots as <name>-<width>.png.
func visit(t *testing.T, ctx context.Context, s *servetest.Service, save bool, pages []page) {
	t.Helper()
	for _, w := range widths {
		for _, p := range pages {
			viewport(t, ctx, w)
			open(t, ctx, s.Base+p.path)
			fits(t, ctx, p.name, w)
			shot(t, ctx, save, fmt.Sprintf("%s-%d", p.name, w))
		}
	}
}

// viewport makes the tab width pixels wide, as a phone or a laptop.
func viewport(t *testing.T, ctx context.Context, width int64) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 844)); err != nil {
		t.Fatalf("viewport %d: %v", width, err)
	}
}

// fits fails unless the page is exactly as wide as the viewport: wider
// means it scrolls sideways. It names the widest element that sticks out.
func fits(t *testing.T, ctx context.Context, name string, width int64) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[int64](
		"Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"))
	if err != nil {
		t.Fatalf("%s at %d: %v", name, width, err)
	}
	inner, err := chromedp.Run(ctx, chromedp.Evaluate[int64]("window.innerWidth"))
	if err != nil {
		t.Fatal(err)
	}
	if got != width || inner != width {
		culprit, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
			let worst = null, right = window.innerWidth;
			for (const e of document.querySelectorAll("body *")) {
				const r = e.getBoundingClientRect().right;
				if (r > right) { right = r; worst = e; }
			}
			return worst ? worst.tagName.toLowerCase() + (worst.className ? "." + worst.className : "") + " to " + Math.round(right) : "";
		})()`))
		t.Errorf("%s at %d px: document %d px wide in a %d px viewport (%s)", name, width, got, inner, culprit)
	}
}

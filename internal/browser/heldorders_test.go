package browser

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/servetest"
	"github.com/licentia/licentia/internal/store/storetest"
)

const (
	heldShopKey    = "sk_test_51BrowserHeldOrdersOnly"
	heldShopSecret = "whsec_browser_held_orders"
)

// TestHeldOrdersInBrowser: a paid Stripe order whose email fails the rule
// is held; the owner sees it on the overview, follows the link, has a
// release with a still failing email refused next to its field, releases
// it corrected and drops another; the page fits a 390-pixel-wide phone
// screen with no horizontal scrolling, long ids and addresses and all.
func TestHeldOrdersInBrowser(t *testing.T) {
	b := browser(t)
	t.Run("sqlite", func(t *testing.T) { walkHeldOrders(t, b, "", true) })
	t.Run("postgres", func(t *testing.T) { walkHeldOrders(t, b, storetest.PostgresURL(t), false) })
}

func walkHeldOrders(t *testing.T, b context.Context, dbURL string, save bool) {
	shop := providertest.NewStripe(t, heldShopKey)
	shop.AddProduct("prod_desk")
	s := servetest.StartWith(t, dbURL, map[string]string{"LICENTIA_STRIPE_API_URL": shop.URL()})
	org := s.Operator(t, "org", "create", "--name", "Acme Software", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	integ := connectShop(t, s)
	key := s.Operator(t, "apikey", "create", "--org", "acme", "--scopes", "products:write,provider:write")["key"].(string)
	if status, body := api(t, s, "POST", "/v1/admin/products", key, map[string]any{"id": "desk-app", "name": "Desk", "key_prefix": "DESK",
		"current_major": 1}); status != http.StatusCreated {
		t.Fatalf("create product: %d %v", status, body)
	}
	if status, body := api(t, s, "PUT", "/v1/admin/integrations/"+integ+"/mappings/prod_desk", key,
		map[string]any{"product_id": "desk-app"}); status != http.StatusOK {
		t.Fatalf("map product: %d %v", status, body)
	}
	long := "pi_" + strings.Repeat("3NqLongPaymentIntent", 6)
	for _, o := range []struct{ session, intent, email string }{
		{"cs_held_1", long, "no address at all, " + strings.Repeat("really-", 12) + "@example"},
		{"cs_held_2", "pi_held_2", "still no address"},
	} {
		sendCheckout(t, s, shop, integ, o.session, o.intent, o.email)
	}

	owner := person(t, b)
	open(t, owner, org["setup_url"].(string))
	if status := submit(t, owner, "form", map[string]string{"password": "correct horse battery"}); status != http.StatusOK {
		t.Fatalf("setting the password: status %d", status)
	}
	open(t, owner, s.Base+"/console/")
	if got := text(t, owner, "main"); !strings.Contains(got, "2 paid orders are held") {
		t.Errorf("overview = %q, want the held orders named", got)
	}
	if status := step(t, owner, "follow the overview's link", chromedp.Click(chromedp.CSS(`main a[href="/console/orders/held"]`))); status != http.StatusOK {
		t.Fatalf("held orders page: status %d", status)
	}
	if n := count(t, owner, "section.held"); n != 2 {
		t.Fatalf("held orders listed = %d, want 2", n)
	}
	shot(t, owner, save, "held-orders")
	if _, err := chromedp.Run(owner, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	open(t, owner, s.Base+"/console/orders/held")
	fits(t, owner, "the held orders page", 390)
	shot(t, owner, save, "held-orders-phone")

	first := `section.held:first-of-type form[action$="/release"]`
	if status := submit(t, owner, first, map[string]string{"email": "a b@example.com"}); status != http.StatusBadRequest {
		t.Fatalf("a release with a bad email: status %d, want 400", status)
	}
	if got := text(t, owner, ".field-error"); !strings.Contains(got, "spaces") {
		t.Errorf("field error = %q, want the email rule", got)
	}
	if status := submit(t, owner, first, map[string]string{"email": "buyer@example.com"}); status != http.StatusOK {
		t.Fatalf("release: status %d", status)
	}
	if got := text(t, owner, "p.notice"); !strings.Contains(got, "was released") {
		t.Errorf("notice = %q", got)
	}
	if status := submit(t, owner, `section.held form[action$="/drop"]`, nil); status != http.StatusOK {
		t.Fatalf("drop: status %d", status)
	}
	if got := text(t, owner, "main"); !strings.Contains(got, "No held order") {
		t.Errorf("page after release and drop = %q", got)
	}
	open(t, owner, s.Base+"/console/")
	if got := text(t, owner, "main"); strings.Contains(got, "held") {
		t.Errorf("overview still names held orders: %q", got)
	}
}

// connectShop connects the Stripe fake to acme with the operator's
// command and returns the integration's id.
func connectShop(t *testing.T, s *servetest.Service) string {
	t.Helper()
	dir := t.TempDir()
	keyFile, secretFile := filepath.Join(dir, "key"), filepath.Join(dir, "secret")
	for f, v := range map[string]string{keyFile: heldShopKey, secretFile: heldShopSecret} {
		if err := os.WriteFile(f, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Operator(t, "integration", "connect", "--org", "acme", "--provider", "stripe", "--name", "Shop",
		"--api-key-file", keyFile, "--webhook-secret-file", secretFile)
	return got["id"].(string)
}

// sendCheckout sends the service Stripe's signed checkout.session.completed
// of one prod_desk, paid by email.
func sendCheckout(t *testing.T, s *servetest.Service, shop *providertest.Stripe, integ, session, intent, email string) {
	t.Helper()
	shop.AddCheckout(session, providers.Item{ProductID: "prod_desk", Quantity: 1})
	now := time.Now()
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_" + session, SessionID: session,
		PaymentIntent: intent, Customer: "cus_held", Email: email}, now)
	req, _ := http.NewRequestWithContext(t.Context(), "POST", s.Base+"/v1/providers/"+integ+"/webhooks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", providertest.StripeSignature(body, heldShopSecret, now))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("checkout %s: status %d, want 200", session, res.StatusCode)
	}
}

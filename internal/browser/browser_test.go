package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// chromiumVar names the browser the tests drive. Unset, they skip; set to
// something that does not run, they fail.
const chromiumVar = "LICENTIA_TEST_CHROMIUM"

// screenshots is where every page visited is saved, for people to look
// at (README: "The console in a browser").
const screenshots = "screenshots"

// api calls the administration or activation API.
func api(t *testing.T, s *servetest.Service, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, s.Base+path, rd)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

var joinLink = regexp.MustCompile(`http://127\.0\.0\.1:\d+/console/join/[0-9A-Za-z]{43}`)

// mailedLink reads the invitation link of the one mail in the outbox,
// as a person would open the .eml file.
func mailedLink(t *testing.T, s *servetest.Service, to string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.Dir, "outbox", "*.eml"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Read as written, as a person copying the link out of the file
		// does: no soft line break may cut it.
		text := string(raw)
		if strings.Contains(text, "To: <"+to+">") || strings.Contains(text, "To: "+to) {
			if l := joinLink.FindString(text); l != "" {
				return l
			}
		}
	}
	t.Fatalf("no invitation to %s in the outbox (%d files)", to, len(files))
	return ""
}

// browser starts headless Chromium for the test and returns a context
// of its first tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv(chromiumVar)
	if path == "" {
		t.Skip(chromiumMissing())
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900),
		// This machine's network is closed: no background connections.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s (%s): %v", path, chromiumVar, err)
	}
	return ctx
}

// person is one browser profile: its own cookies, as another person on
// another computer.
func person(t *testing.T, b context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The tab's life is bound to the context of its first run: this one.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a browser profile: %v", err)
	}
	return ctx
}

// step runs actions that load a page and returns its status.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := chromedp.RunResponse(ctx, actions...)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return int(res.Status)
}

// open loads url and wants 200.
func open(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if status := step(t, ctx, "open "+url, chromedp.Navigate(url)); status != http.StatusOK {
		t.Fatalf("open %s: status %d", url, status)
	}
}

// submit fills a form's fields (by name) and presses its submit button,
// and returns the status of the page it leads to.
func submit(t *testing.T, ctx context.Context, form string, fields map[string]string) int {
	t.Helper()
	var actions []chromedp.Action[chromedp.Void]
	for name, v := range fields {
		actions = append(actions, chromedp.SetValue(chromedp.CSS(form+` [name="`+name+`"]`), v))
	}
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("fill %s: %v", form, err)
	}
	return step(t, ctx, "submit "+form, chromedp.Click(chromedp.CSS(form+` button[type="submit"]`)))
}

// text is the visible text of the first element matching sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// count is how many elements match sel.
func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
	if err != nil {
		t.Fatalf("count %s: %v", sel, err)
	}
	return n
}

// location is the page's address.
func location(t *testing.T, ctx context.Context) string {
	t.Helper()
	l, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// shot saves a screenshot of the whole page when save is set.
func shot(t *testing.T, ctx context.Context, save bool, name string) {
	t.Helper()
	if !save {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(screenshots, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshots, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleInBrowser walks the console as its people do, on SQLite and
// on PostgreSQL: the owner signs in from the setup link, makes a product,
// an API key (used at once on the API), and a licence; a customer frees a
// machine on the customer page; a viewer, invited by mail, joins from the
// outbox's link, sees no write buttons, and has a forged post refused;
// the owner revokes the licence.
func TestConsoleInBrowser(t *testing.T) {
	b := browser(t)
	t.Run("sqlite", func(t *testing.T) { walkConsole(t, b, servetest.Start(t, ""), true) })
	t.Run("postgres", func(t *testing.T) { walkConsole(t, b, servetest.Start(t, storetest.PostgresURL(t)), false) })
}

func walkConsole(t *testing.T, b context.Context, s *servetest.Service, save bool) {
	org := s.Operator(t, "org", "create", "--name", "Acme Software", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	setup, _ := org["setup_url"].(string)
	if !strings.HasPrefix(setup, s.Base+"/console/setup/") {
		t.Fatalf("setup_url = %q, want a link at %s", setup, s.Base)
	}
	owner := person(t, b)

	// The setup link: choose a password, and be signed in.
	open(t, owner, setup)
	shot(t, owner, save, "setup-link")
	if status := submit(t, owner, "form", map[string]string{"password": "correct horse battery"}); status != http.StatusOK {
		t.Fatalf("setting the password: status %d", status)
	}
	if l := location(t, owner); !strings.HasPrefix(l, s.Base+"/console/") {
		t.Fatalf("after the setup link: at %s", l)
	}
	if status := step(t, owner, "open the used link", chromedp.Navigate(setup)); status != http.StatusNotFound {
		t.Errorf("a used setup link opened again: status %d, want 404", status)
	}
	shot(t, owner, save, "link-used")

	// A product, then an API key, shown once and used at once.
	open(t, owner, s.Base+"/console/products")
	if status := submit(t, owner, `form[action="/console/products"]`, map[string]string{
		"id": "desk-app", "name": "Desk App", "key_prefix": "DESK", "current_major": "2"}); status != http.StatusOK {
		t.Fatalf("create product: status %d", status)
	}
	shot(t, owner, save, "product")
	open(t, owner, s.Base+"/console/products")
	shot(t, owner, save, "products")

	open(t, owner, s.Base+"/console/api-keys")
	if err := chromedp.Do(owner,
		chromedp.SetValue(chromedp.CSS(`form[action="/console/api-keys"] [name="name"]`), "backend"),
		chromedp.Click(chromedp.CSS(`input[name="scopes"][value="licences:read"]`)),
		chromedp.Click(chromedp.CSS(`input[name="scopes"][value="licences:write"]`)),
	); err != nil {
		t.Fatal(err)
	}
	if status := step(t, owner, "create key", chromedp.Click(chromedp.CSS(`form[action="/console/api-keys"] button[type="submit"]`))); status != http.StatusCreated {
		t.Fatalf("create key: status %d", status)
	}
	key := text(t, owner, "#new-key")
	shot(t, owner, save, "api-keys")
	if status, _ := api(t, s, "GET", "/v1/admin/licences/counts", key, nil); status != http.StatusOK {
		t.Fatalf("the new key on the API: status %d", status)
	}
	open(t, owner, s.Base+"/console/api-keys")
	if count(t, owner, "#new-key") != 0 || strings.Contains(text(t, owner, "main"), key) {
		t.Error("the key is shown again")
	}

	// A licence issued in the console, a machine activated with its key.
	open(t, owner, s.Base+"/console/licences")
	if status := submit(t, owner, `form[action="/console/licences"][method="post"]`, map[string]string{
		"product_id": "desk-app", "email": "buyer@example.com", "limit_count": "2"}); status != http.StatusOK {
		t.Fatalf("issue: status %d", status)
	}
	licenceURL := strings.Split(location(t, owner), "?")[0]
	licenceID := licenceURL[strings.LastIndex(licenceURL, "/")+1:]
	licenceKey := text(t, owner, "table.facts code.secret")
	status, act := api(t, s, "POST", "/v1/activations", "", map[string]any{
		"licence_key": licenceKey, "machine_id": "machine-0001", "label": "Ada's laptop", "os": "linux", "app_version": "2.0.1"})
	if status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("activate: status %d %v", status, act)
	}
	open(t, owner, licenceURL)
	if !strings.Contains(text(t, owner, "main"), "machine-0001") {
		t.Error("the licence page does not show the machine")
	}
	shot(t, owner, save, "licence")
	open(t, owner, s.Base+"/console/licences")
	shot(t, owner, save, "licences")

	// The customer page: the buyer finds the purchase and frees the
	// machine, without an account.
	st := s.OpenStore(t)
	o, err := st.OrganizationBySlug(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	order := "ord_1001"
	err = st.InTx(t.Context(), func(tx store.Tx) error {
		l, err := tx.LockLicence(t.Context(), o.ID, licenceID)
		if err != nil {
			return err
		}
		after := *l
		after.Provider.OrderID = &order
		return tx.UpdateLicence(t.Context(), &after)
	})
	if err != nil {
		t.Fatalf("give the licence an order: %v", err)
	}
	customer := person(t, b)
	open(t, customer, s.Base+"/console/purchase")
	shot(t, customer, save, "purchase-form")
	if status := submit(t, customer, `form[action="/console/purchase"]`, map[string]string{"email": "BUYER@example.com", "order_id": order}); status != http.StatusOK {
		t.Fatalf("purchase lookup: status %d", status)
	}
	if got := text(t, customer, "main"); !strings.Contains(got, licenceKey) || !strings.Contains(got, "Ada's laptop") {
		t.Fatalf("the purchase page lacks the key or the machine:\n%s", got)
	}
	shot(t, customer, save, "purchase")
	if status := step(t, customer, "free", chromedp.Click(chromedp.CSS(`form[action="/console/purchase/free"] button`))); status != http.StatusOK {
		t.Fatalf("free a machine: status %d", status)
	}
	shot(t, customer, save, "purchase-freed")
	entries, err := st.LicenceAudit(t.Context(), o.ID, licenceID)
	if err != nil {
		t.Fatal(err)
	}
	last := entries[len(entries)-1]
	if last.Action != licentia.AuditActivationDeactivated || last.Actor.Type != licentia.ActorCustomer || last.Actor.ID != nil {
		t.Errorf("last audit entry %s by %+v, want activation.deactivated by the customer", last.Action, last.Actor)
	}

	// A viewer, invited from the team page, joins from the mailed link.
	open(t, owner, s.Base+"/console/team")
	if status := submit(t, owner, `form[action="/console/team/invitations"]`, map[string]string{"email": "vera@acme.example", "role": "viewer"}); status != http.StatusOK {
		t.Fatalf("invite: status %d", status)
	}
	shot(t, owner, save, "team")
	viewer := person(t, b)
	open(t, viewer, mailedLink(t, s, "vera@acme.example"))
	shot(t, viewer, save, "invitation-link")
	if status := submit(t, viewer, "form", map[string]string{"password": "viewer's own passphrase"}); status != http.StatusOK {
		t.Fatalf("join: status %d", status)
	}
	shot(t, viewer, save, "overview-viewer")
	open(t, viewer, licenceURL)
	if n := count(t, viewer, "main form[method=post], main button"); n != 0 {
		t.Errorf("the viewer sees %d write forms or buttons on the licence page", n)
	}
	shot(t, viewer, save, "licence-viewer")
	// A post the page does not offer, forged in the viewer's own browser
	// (same origin, their cookie), is refused and changes nothing.
	forge := fmt.Sprintf(`(() => {
		const f = document.createElement("form");
		f.method = "post"; f.action = "/console/licences/%s/revoke";
		const i = document.createElement("input"); i.name = "reason"; i.value = "forged"; f.appendChild(i);
		document.body.appendChild(f); f.submit();
		return true;
	})()`, licenceID)
	forged := step(t, viewer, "forged revoke", chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](forge)(ctx, tgt)
		return err
	}))
	if forged != http.StatusForbidden {
		t.Errorf("the viewer's forged revoke: status %d, want 403", forged)
	}
	shot(t, viewer, save, "forbidden")

	// A form on another site posting to the console is refused, even for
	// the signed-in owner.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/console/licences/%s/revoke"><input name="reason" value="cross-site"><button type="submit">Win a prize</button></form>`,
			s.Base, licenceID)
	}))
	defer evil.Close()
	open(t, owner, evil.URL)
	if status := step(t, owner, "cross-site post", chromedp.Click(chromedp.CSS("button"))); status != http.StatusForbidden {
		t.Errorf("a cross-site form post: status %d, want 403", status)
	}

	// The owner revokes the licence.
	open(t, owner, licenceURL)
	if status := submit(t, owner, `form[action="/console/licences/`+licenceID+`/revoke"]`, map[string]string{"reason": "chargeback"}); status != http.StatusOK {
		t.Fatalf("revoke: status %d", status)
	}
	if got := text(t, owner, "table.facts span.state"); got != "revoked" {
		t.Errorf("state after revoking = %q", got)
	}
	shot(t, owner, save, "licence-revoked")
	if status, l := api(t, s, "GET", "/v1/admin/licences/"+licenceID, key, nil); status != http.StatusOK || l["licence"].(map[string]any)["status"] != "revoked" {
		t.Errorf("the API after revoking: %d %v", status, l)
	}

	// The other pages, for people to look at.
	for name, path := range map[string]string{
		"overview": "/console/", "webhooks": "/console/webhooks", "integrations": "/console/integrations", "audit": "/console/audit",
	} {
		open(t, owner, s.Base+path)
		shot(t, owner, save, name)
	}
	open(t, owner, s.Base+"/console/")
	if n := count(t, owner, "svg"); n == 0 {
		t.Error("the overview has no chart")
	}

	// Signing out ends the session; signing in starts another.
	if status := step(t, owner, "sign out", chromedp.Click(chromedp.CSS(`form[action="/console/sign-out"] button`))); status != http.StatusOK {
		t.Fatalf("sign out: status %d", status)
	}
	shot(t, owner, save, "sign-in")
	if status := submit(t, owner, `form[action="/console/sign-in"]`, map[string]string{"email": "owner@acme.example", "password": "correct horse battery"}); status != http.StatusOK {
		t.Fatalf("sign in: status %d", status)
	}
	if l := location(t, owner); !strings.HasPrefix(l, s.Base+"/console/") || strings.Contains(l, "sign-in") {
		t.Errorf("after signing in: at %s", l)
	}

	for _, secret := range []string{"correct horse battery", "viewer's own passphrase", key, licenceKey, "owner@acme.example", "vera@acme.example", "buyer@example.com"} {
		if strings.Contains(s.Logs.String(), secret) {
			t.Errorf("the serve log holds %q", secret)
		}
	}
}

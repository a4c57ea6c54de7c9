package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/licentia/licentia/internal/servetest"
	"github.com/licentia/licentia/internal/store/storetest"
	"github.com/licentia/licentia/sdk"
)

// TestPortalInBrowser walks the customer portal as a buyer does: signs in
// by the link copied from the raw .eml (used once, then refused), sees
// licences of two products, renames and frees a machine, activates one
// offline from a request file, has the key mailed again, and replaces it:
// the old key is then refused by /v1/activations and the new one
// activates. Every page is saved at 1280 and 390 pixels wide, and at 390
// none scrolls sideways. Both engines; the SQLite walk saves the pictures.
func TestPortalInBrowser(t *testing.T) {
	b := browser(t)
	t.Run("sqlite", func(t *testing.T) { walkPortal(t, b, servetest.Start(t, ""), true) })
	t.Run("postgres", func(t *testing.T) { walkPortal(t, b, servetest.Start(t, storetest.PostgresURL(t)), false) })
}

var portalLink = regexp.MustCompile(`(?m)^(http://127\.0\.0\.1:\d+/portal/acme/sign-in/[A-Za-z0-9_-]{43})\r?$`)

// outboxWith waits for the courier to write a mail to to holding want in
// its raw text, and returns the raw mails to that address.
func outboxWith(t *testing.T, s *servetest.Service, to, want string) []string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var out []string
		files, _ := filepath.Glob(filepath.Join(s.Dir, "outbox", "*.eml"))
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if text := string(raw); strings.Contains(text, to) && strings.Contains(text, want) {
				out = append(out, text)
			}
		}
		if len(out) > 0 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mail to %s holding %q in the outbox", to, want)
		}
		time.Sleep(100 * time.Millisecond) // the courier polls each second
	}
}

func walkPortal(t *testing.T, b context.Context, s *servetest.Service, save bool) {
	s.Operator(t, "org", "create", "--name", "Acme Software", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	key := s.Operator(t, "apikey", "create", "--org", "acme", "--scopes", "products:write,licences:write,licences:read")["key"].(string)
	for _, p := range []map[string]any{
		{"id": "photo", "name": "Photo Studio", "key_prefix": "PHOTO", "current_major": 1},
		{"id": "sync", "name": "Sync Pro", "key_prefix": "SYNC", "current_major": 1},
	} {
		if status, out := api(t, s, "POST", "/v1/admin/products", key, p); status != http.StatusCreated {
			t.Fatalf("create product: %d %v", status, out)
		}
	}
	keys := map[string]string{}
	for _, p := range []string{"photo", "sync"} {
		status, out := api(t, s, "POST", "/v1/admin/licences", key, map[string]any{"product_id": p, "email": "buyer@example.com", "limit_count": 2})
		if status != http.StatusCreated {
			t.Fatalf("issue: %d %v", status, out)
		}
		keys[p] = out["licence_key"].(string)
	}
	activate := func(licenceKey, machine string) int {
		status, _ := api(t, s, "POST", "/v1/activations", "", map[string]any{"licence_key": licenceKey, "machine_id": machine,
			"label": "Laptop " + machine, "os": "linux", "app_version": "1.0"})
		return status
	}
	for _, m := range []string{"machine-one-0123456789", "machine-two-0123456789"} {
		if status := activate(keys["photo"], m); status != http.StatusCreated {
			t.Fatalf("activate %s: %d", m, status)
		}
	}

	buyer := person(t, b)
	both := func(name string) {
		t.Helper()
		shot(t, buyer, save, "portal-"+name)
		url := location(t, buyer)
		if _, err := chromedp.Run(buyer, chromedp.EmulateViewport(390, 844)); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(url, s.Base+"/portal/acme/") && !strings.Contains(url, "sign-in") {
			open(t, buyer, url) // the page again, laid out for the phone
		}
		fits(t, buyer, name, 390)
		shot(t, buyer, save, "portal-"+name+"-phone")
		if _, err := chromedp.Run(buyer, chromedp.EmulateViewport(1280, 900)); err != nil {
			t.Fatal(err)
		}
	}
	open(t, buyer, s.Base+"/portal/acme/")
	both("sign-in")
	if status := submit(t, buyer, `form[action="/portal/acme/sign-in"]`, map[string]string{"email": "Buyer@Example.com"}); status != http.StatusOK {
		t.Fatalf("ask for a link: status %d", status)
	}
	both("sent")
	mails := outboxWith(t, s, "buyer@example.com", "/portal/acme/sign-in/")
	m := portalLink.FindStringSubmatch(mails[0])
	if m == nil {
		t.Fatalf("no sign-in link on a line of its own in the raw mail:\n%s", mails[0])
	}
	link := m[1]
	open(t, buyer, link)
	both("link")
	if status := step(t, buyer, "sign in", chromedp.Click(chromedp.CSS(`main form button[type="submit"]`))); status != http.StatusOK {
		t.Fatalf("sign in: status %d", status)
	}
	got := text(t, buyer, "main")
	for _, want := range []string{"Photo Studio", "Sync Pro", keys["photo"], keys["sync"], "Laptop machine-one-0123456789"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the licences page lacks %q:\n%s", want, got)
		}
	}
	both("licences")
	other := person(t, b)
	if status := step(t, other, "open the used link", chromedp.Navigate(link)); status != http.StatusNotFound {
		t.Errorf("a used link opened again: status %d, want 404", status)
	}
	if got := text(t, other, "main"); !strings.Contains(got, "no longer works") || count(t, other, "main form") != 0 {
		t.Errorf("a used link offers to sign in:\n%s", got)
	}

	rename := `form[action$="/rename"]`
	if status := submit(t, buyer, rename, map[string]string{"label": "Studio desktop"}); status != http.StatusOK {
		t.Fatalf("rename: status %d", status)
	}
	if got := text(t, buyer, "main"); !strings.Contains(got, "Studio desktop") || !strings.Contains(got, "renamed") {
		t.Errorf("after renaming:\n%s", got)
	}
	both("renamed")
	if status := step(t, buyer, "free", chromedp.Click(chromedp.CSS(`form[action$="/free"] button`))); status != http.StatusOK {
		t.Fatalf("free: status %d", status)
	}
	if got := text(t, buyer, "p.notice"); !strings.Contains(got, "freed") {
		t.Errorf("notice after freeing = %q", got)
	}

	// Offline: a request file as the SDK writes it.
	req, _ := json.MarshalIndent(sdk.OfflineRequest{Format: sdk.OfflineRequestFormat, LicenceKey: keys["sync"], MachineID: "offline-pc-1",
		Machine: sdk.Machine{Label: "Lab PC", OS: "windows", AppVersion: "1.0"}}, "", "  ")
	file := filepath.Join(t.TempDir(), "licentia-offline-request.json")
	if err := os.WriteFile(file, req, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(buyer, chromedp.SetUploadFiles(`input[name="request"]`, []string{file})); err != nil {
		t.Fatal(err)
	}
	// The answer is a download: wait for the whole file, then look again.
	answer := downloaded(t, buyer, `form[action$="/offline"] button`)
	if !bytes.Contains(answer, []byte(`"machine_id": "offline-pc-1"`)) && !bytes.Contains(answer, []byte(`"machine_id":"offline-pc-1"`)) {
		t.Errorf("the offline answer does not name the machine:\n%s", answer)
	}
	open(t, buyer, s.Base+"/portal/acme/")
	if got := text(t, buyer, "main"); !strings.Contains(got, "Lab PC") {
		t.Fatalf("the offline activation is not listed:\n%s", got)
	}

	sendKey := `form[action$="/send-key"]`
	if status := step(t, buyer, "send key", chromedp.Click(chromedp.CSS(sendKey+" button"))); status != http.StatusOK {
		t.Fatalf("send key: status %d", status)
	}
	both("key-mailed")
	outboxWith(t, s, "buyer@example.com", keys["sync"])

	// The first listed licence is the newest: sync.
	if status := step(t, buyer, "reissue", chromedp.Click(chromedp.CSS(`form[action$="/reissue"] button`))); status != http.StatusOK {
		t.Fatalf("reissue: status %d", status)
	}
	both("reissued")
	got = text(t, buyer, "main")
	if strings.Contains(got, keys["sync"]) {
		t.Errorf("the old key is still shown after reissue")
	}
	fresh := regexp.MustCompile(`SYNC_[0-9A-Z-]{40,}`).FindString(got)
	if fresh == "" {
		t.Fatalf("no new key shown:\n%s", got)
	}
	if status := activate(keys["sync"], "machine-three-0123"); status != http.StatusForbidden {
		t.Errorf("the old key activating: status %d, want 403", status)
	}
	if status := activate(fresh, "machine-three-0123"); status != http.StatusCreated {
		t.Errorf("the new key activating: status %d, want 201", status)
	}
	if status := step(t, buyer, "open a missing page", chromedp.Navigate(s.Base+"/portal/nobody/")); status != http.StatusNotFound {
		t.Errorf("an unknown organization's portal: status %d, want 404", status)
	}
	both("not-found")
}

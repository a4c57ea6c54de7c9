package browser

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/licentia/licentia/internal/servetest"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestLicencesInBrowser walks the Licences list, a licence page and the
// audit log as a maker reads them, on SQLite and on PostgreSQL: the list
// filters by product, finds a licence by its order id and by a machine's
// id, shows machines as "1 of 3" and downloads the current filter as CSV;
// the licence page offers only the changes its state allows; the audit
// log names people and filters by action. Each page fits a laptop and a
// phone with no sideways scrolling.
func TestLicencesInBrowser(t *testing.T) {
	b := browser(t)
	t.Run("sqlite", func(t *testing.T) { walkLicences(t, b, servetest.Start(t, ""), true) })
	t.Run("postgres", func(t *testing.T) { walkLicences(t, b, servetest.Start(t, storetest.PostgresURL(t)), false) })
}

// rowsShown lists the e-mail cells of the Licences list.
func rowsShown(t *testing.T, ctx context.Context) []string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('td[data-label="Email"]')).map(td => td.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// search sends the Licences filter form with fields, the others left as
// the page shows them.
func search(t *testing.T, ctx context.Context, base string, fields map[string]string) {
	t.Helper()
	open(t, ctx, base+"/console/licences")
	if status := submit(t, ctx, `form.filters`, fields); status != http.StatusOK {
		t.Fatalf("search %v: status %d", fields, status)
	}
}

func walkLicences(t *testing.T, b context.Context, s *servetest.Service, save bool) {
	org := s.Operator(t, "org", "create", "--name", "Acme Software", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	owner := person(t, b)
	open(t, owner, org["setup_url"].(string))
	if status := submit(t, owner, "form", map[string]string{"password": "correct horse battery"}); status != http.StatusOK {
		t.Fatalf("setting the password: status %d", status)
	}
	for _, p := range [][2]string{{"desk-app", "DESK"}, {"cad-app", "CAD"}} {
		open(t, owner, s.Base+"/console/products")
		if status := submit(t, owner, `form[action="/console/products"]`, map[string]string{
			"id": p[0], "name": strings.ToUpper(p[0][:1]) + p[0][1:], "key_prefix": p[1], "current_major": "1"}); status != http.StatusOK {
			t.Fatalf("create product %s: status %d", p[0], status)
		}
	}
	ids := map[string]string{}
	keys := map[string]string{}
	for _, l := range [][2]string{{"desk-app", "ada@example.com"}, {"desk-app", "bob@example.com"}, {"cad-app", "cy@example.com"}} {
		open(t, owner, s.Base+"/console/licences")
		if status := submit(t, owner, `form[action="/console/licences"][method="post"]`, map[string]string{
			"product_id": l[0], "email": l[1], "limit_count": "1"}); status != http.StatusOK {
			t.Fatalf("issue to %s: status %d", l[1], status)
		}
		u := strings.Split(location(t, owner), "?")[0]
		ids[l[1]] = u[strings.LastIndex(u, "/")+1:]
		keys[l[1]] = text(t, owner, "table.facts code.secret")
	}
	machine := "machine-5c1f0e7d9a2b4c6e8f1a3b5d7c9e0f2a"
	if status, act := api(t, s, "POST", "/v1/activations", "", map[string]any{
		"licence_key": keys["ada@example.com"], "machine_id": machine, "label": "Ada's laptop", "os": "linux", "app_version": "1.0.0"}); status != http.StatusCreated {
		t.Fatalf("activate: status %d %v", status, act)
	}
	st := s.OpenStore(t)
	o, err := st.OrganizationBySlug(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	order := "pi_3QxYz1001"
	err = st.InTx(t.Context(), func(tx store.Tx) error {
		l, err := tx.LockLicence(t.Context(), o.ID, ids["bob@example.com"])
		if err != nil {
			return err
		}
		after := *l
		after.Provider.OrderID = &order
		return tx.UpdateLicence(t.Context(), &after)
	})
	if err != nil {
		t.Fatalf("give a licence an order: %v", err)
	}

	// The list, newest first, then filtered by product.
	open(t, owner, s.Base+"/console/licences")
	if got := rowsShown(t, owner); strings.Join(got, " ") != "cy@example.com bob@example.com ada@example.com" {
		t.Errorf("list = %v, want the three newest first", got)
	}
	if got := text(t, owner, `tbody tr:nth-child(3) td[data-label="Machines"]`); got != "1 of 3" {
		t.Errorf("ada's machines = %q, want 1 of 3", got)
	}
	atEveryWidth(t, owner, save, "licences-list", s.Base+"/console/licences")
	search(t, owner, s.Base, map[string]string{"product_id": "cad-app"})
	if got := rowsShown(t, owner); strings.Join(got, " ") != "cy@example.com" {
		t.Errorf("filtered by product = %v, want cy's", got)
	}

	// A support mail quotes an order id, or a machine id.
	for _, tt := range []struct{ q, want, matched string }{
		{order, "bob@example.com", "Matched by order id."},
		{machine, "ada@example.com", "Matched by machine id."},
	} {
		search(t, owner, s.Base, map[string]string{"q": tt.q})
		if got := rowsShown(t, owner); strings.Join(got, " ") != tt.want {
			t.Errorf("search %s = %v, want %s", tt.q, got, tt.want)
		}
		if got := text(t, owner, "main"); !strings.Contains(got, tt.matched) {
			t.Errorf("search %s does not say %q", tt.q, tt.matched)
		}
	}
	shot(t, owner, save, "licences-search")

	// The export link downloads the current filter as CSV.
	search(t, owner, s.Base, map[string]string{"product_id": "desk-app"})
	rows := download(t, owner, `a[href^="/console/licences/export"]`)
	if len(rows) != 3 || rows[0][0] != "id" || rows[1][2] != "bob@example.com" || rows[2][2] != "ada@example.com" {
		t.Errorf("export = %v, want the header and desk-app's two licences", rows)
	}

	// The licence page: only what its state allows, in plain words.
	ada := s.Base + "/console/licences/" + ids["ada@example.com"]
	open(t, owner, ada)
	if n := count(t, owner, `form[action$="/reinstate"]`); n != 0 || count(t, owner, `form[action$="/revoke"]`) != 1 {
		t.Errorf("an active licence offers reinstating (%d forms) or not revoking", n)
	}
	main := text(t, owner, "main")
	for _, want := range []string{"1 seat (up to 3 machines)", "1 of 3 in use", "Ada's laptop"} {
		if !strings.Contains(main, want) {
			t.Errorf("licence page lacks %q", want)
		}
	}
	if strings.Contains(main, "stored status") || strings.Contains(main, machine) {
		t.Errorf("licence page reads 'stored status' or shows the machine's whole id as text")
	}
	if status := submit(t, owner, `form[action$="/revoke"]`, map[string]string{"reason": "refund"}); status != http.StatusOK {
		t.Fatalf("revoke: status %d", status)
	}
	if count(t, owner, `form[action$="/revoke"]`) != 0 || count(t, owner, `form[action$="/reinstate"]`) != 1 {
		t.Errorf("a revoked licence offers revoking, or not reinstating")
	}
	atEveryWidth(t, owner, save, "licence-page", ada)

	// The audit log: people by name, details in words, filters.
	open(t, owner, s.Base+"/console/audit")
	if status := submit(t, owner, `form.filters`, map[string]string{"action": "licence.revoked"}); status != http.StatusOK {
		t.Fatalf("filter the audit log: status %d", status)
	}
	log := text(t, owner, "table.history")
	if !strings.Contains(log, "owner@acme.example") || !strings.Contains(log, "From active to revoked. Reason: refund.") || strings.Contains(log, "Licence issued") {
		t.Errorf("filtered audit log = %q", log)
	}
	atEveryWidth(t, owner, save, "audit-log", location(t, owner))
}

// download clicks the link sel and reads the CSV file it saves.
func download(t *testing.T, ctx context.Context, sel string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(downloaded(t, ctx, sel))).ReadAll()
	if err != nil {
		t.Fatalf("read the downloaded CSV: %v", err)
	}
	return rows
}

// downloaded clicks sel (a link or a form's button whose answer is a
// download) and returns the file the browser saved, once it is whole.
func downloaded(t *testing.T, ctx context.Context, sel string) []byte {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	progress := chromedp.Events(ctx, cdpbrowser.DownloadProgress)
	id := chromedp.FromContext(ctx).BrowserContextID
	if err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
				Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, BrowserContextID: id,
				DownloadPath: dir, EventsEnabled: new(true),
			})
			return err
		}),
		chromedp.Click(chromedp.CSS(sel)),
	); err != nil {
		t.Fatalf("download %s: %v", sel, err)
	}
	for ev, err := range progress {
		if err != nil {
			t.Fatalf("download %s: %v", sel, err)
		}
		if ev.State == cdpbrowser.DownloadProgressStateCanceled {
			t.Fatalf("download %s was cancelled", sel)
		}
		if ev.State != cdpbrowser.DownloadProgressStateCompleted {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, ev.GUID))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Fatalf("download %s never completed", sel)
	return nil
}

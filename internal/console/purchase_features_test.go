package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// The customer page shows each licence's features by name and code, with
// how long each lasts, a grant past its expiry marked ended; a licence
// with none has no features section.
func TestCustomerPageFeatures(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		e.product(t, e.org.ID, "desk-app", "DESK")
		e.product(t, e.org.ID, "notes", "NOTE")
		e.feature(t, e.org.ID, "desk-app", "export-pdf", "Export to PDF")
		e.feature(t, e.org.ID, "desk-app", "sync", "Sync")
		until := e.clock.Now().Add(24 * time.Hour)
		desk := e.sell(t, "desk-app", "buyer@example.com", "ord_2001")
		plain := e.sell(t, "notes", "buyer@example.com", "ord_2001")
		if _, err := e.admin.UpdateLicence(t.Context(), licentia.OperatorActor, e.org.ID, desk.ID, admin.LicenceChange{
			Features: []licentia.GrantRequest{{FeatureGrant: licentia.FeatureGrant{Code: "export-pdf"}},
				{FeatureGrant: licentia.FeatureGrant{Code: "sync", ExpiresAt: &until}}}}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(48 * time.Hour)

		a := e.buyer("198.51.100.30").post(t, "/console/purchase", url.Values{"email": {"buyer@example.com"}, "order_id": {"ord_2001"}})
		wantStatus(t, "lookup", a, http.StatusOK)
		card := func(product string) string {
			for c := range strings.SplitSeq(a.body, `<section class="card">`) {
				if strings.HasPrefix(c, "\n<h3>"+product+"</h3>") {
					return c
				}
			}
			t.Fatalf("no card of %s:\n%s", product, a.body)
			return ""
		}
		got := card("Product desk-app")
		for _, want := range []string{
			"<li>Export to PDF <code>export-pdf</code>: as long as the licence</li>",
			"<li>Sync <code>sync</code>: until " + until.UTC().Format("2006-01-02 15:04 UTC") + ` <span class="state expired">ended</span></li>`,
		} {
			if !strings.Contains(got, want) {
				t.Errorf("the licence's card lacks %q:\n%s", want, got)
			}
		}
		if strings.Count(got, "ended") != 1 {
			t.Errorf("only the sync grant has ended:\n%s", got)
		}
		if got := card("Product notes"); strings.Contains(got, "Features") || strings.Contains(got, `class="features"`) {
			t.Errorf("licence %s without features shows a features section:\n%s", plain.ID, got)
		}
	})
}

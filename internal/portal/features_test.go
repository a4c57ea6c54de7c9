package portal_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// A licence's features read on its card by name and code, with how long
// each lasts, a grant past its expiry marked ended; a licence with none
// has no features at all.
func TestLicenceFeatures(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		for code, name := range map[string]string{"export-pdf": "Export to PDF", "raw": "RAW import"} {
			if _, err := e.admin.SaveFeature(t.Context(), licentia.OperatorActor, e.org.ID, "photo", code, admin.FeatureSave{Name: &name}); err != nil {
				t.Fatal(err)
			}
		}
		until := e.clock.Now().Add(24 * time.Hour)
		product, email := "photo", "ada@example.com"
		photo, err := e.admin.IssueLicence(t.Context(), licentia.OperatorActor, e.org.ID, admin.NewLicence{ProductID: &product, Email: &email,
			Features: []licentia.GrantRequest{{FeatureGrant: licentia.FeatureGrant{Code: "export-pdf"}},
				{FeatureGrant: licentia.FeatureGrant{Code: "raw", ExpiresAt: &until}}}})
		if err != nil {
			t.Fatal(err)
		}
		plain := e.issue(t, e.org.ID, "sync", email)
		e.clock.Advance(48 * time.Hour)

		page := e.signIn(t, "acme", email).get(t, "/portal/acme/")
		wantStatus(t, "licences", page, http.StatusOK)
		card := func(id string) string {
			_, rest, ok := strings.Cut(page.body, `id="licence-`+id+`"`)
			if !ok {
				t.Fatalf("no card of licence %s:\n%s", id, page.body)
			}
			c, _, _ := strings.Cut(rest, "</section>")
			return c
		}
		got := card(photo.Licence.ID)
		for _, want := range []string{
			"<li>Export to PDF <code>export-pdf</code>: as long as the licence</li>",
			"<li>RAW import <code>raw</code>: until " + until.UTC().Format("2 Jan 2006 15:04 UTC") + ` <span class="state expired">ended</span></li>`,
		} {
			if !strings.Contains(got, want) {
				t.Errorf("the licence's card lacks %q:\n%s", want, got)
			}
		}
		if strings.Count(got, "ended") != 1 {
			t.Errorf("only the raw grant has ended:\n%s", got)
		}
		if got := card(plain.Licence.ID); strings.Contains(got, "Features") || strings.Contains(got, `class="features"`) {
			t.Errorf("a licence without features shows a features section:\n%s", got)
		}
	})
}

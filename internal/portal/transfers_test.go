package portal_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// A licence whose product allows transfers shows on its card how many
// were made in the last 30 days of how many, with what a transfer is, and
// with a limit of computers at once how many run it now; a licence with
// neither says nothing of them.
func TestLicenceTransfersOnCard(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		one, two, three := int64(1), int64(2), int64(3)
		if _, err := e.admin.UpdateProduct(t.Context(), licentia.OperatorActor, e.org.ID, "photo",
			admin.ProductPatch{MachinesPerSeat: &one, TransfersPer30Days: &two, MaxConcurrent: &three}); err != nil {
			t.Fatal(err)
		}
		email := "ada@example.com"
		photo := e.issue(t, e.org.ID, "photo", email)
		plain := e.issue(t, e.org.ID, "sync", email)
		e.activate(t, *photo.Key, "a")
		e.activate(t, *photo.Key, "b")
		e.clock.Advance(24 * time.Hour)
		e.activate(t, *photo.Key, "c") // takes the place of one unseen for a day
		machine := "c"
		if _, err := e.act.TakeLease(t.Context(), activation.TakeLease{LicenceKey: photo.Key, MachineID: &machine}); err != nil {
			t.Fatalf("TakeLease() error = %v", err)
		}

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
		for _, want := range []string{"<dt>Transfers</dt><dd>1 of 2 in the last 30 days",
			"a new computer may take the place of one unseen for a day", "<dt>Computers running it now</dt><dd>1 of 3</dd>"} {
			if !strings.Contains(got, want) {
				t.Errorf("the licence's card lacks %q:\n%s", want, got)
			}
		}
		if got := card(plain.Licence.ID); strings.Contains(got, "Transfer") || strings.Contains(got, "transfer") ||
			strings.Contains(got, "running it now") {
			t.Errorf("a licence with transfers off speaks of transfers:\n%s", got)
		}
	})
}

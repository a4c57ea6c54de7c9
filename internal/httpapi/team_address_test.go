package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// unmailable is the issue of an address that passes the email rule but
// that mail cannot be sent to.
const unmailable = "must be an address mail can be sent to"

// TestInviteUnmailableAddress: an address the email rule takes but the mail
// library's parser refuses (a quote, two dots in a row, an angle bracket),
// or reads as another address, answers 400 validation_failed at /email
// before anything is written or mailed, never 503. On SQLite and
// PostgreSQL.
func TestInviteUnmailableAddress(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newTestEnvWith(t, envOptions{postgres: engine == "postgres"})
			tok := e.assistantToken(t, e.org.ID, "owner@acme.example")
			audit, _ := e.store.OrganizationAudit(t.Context(), e.org.ID)
			for _, addr := range []string{`a"b@x.example`, `a..b@x.example`, `a<b@x.example`, `.a@x.example`, `<a@x.example>`, `"a"@x.example`} {
				t.Run(addr, func(t *testing.T) {
					e.run(t, scenario{call: invite(tok, addr, licentia.RoleViewer), wantStatus: http.StatusBadRequest,
						wantCode: licentia.CodeValidationFailed, wantDetails: issuesAt("/email", unmailable)})
				})
			}
			invs, _ := e.store.PendingInvitations(t.Context(), e.org.ID, e.clock.Now())
			after, _ := e.store.OrganizationAudit(t.Context(), e.org.ID)
			if len(invs) != 0 || len(after) != len(audit) || len(e.mails(t)) != 0 {
				t.Errorf("after the refusals: %d invitations, %d audit entries (was %d), %d mails; want none written or mailed",
					len(invs), len(after), len(audit), len(e.mails(t)))
			}
			// Addresses mail takes, unusual ones included, are invited.
			for _, addr := range []string{"ada.lovelace+team@x.example", "o'brien@x.example", "ümlaut@x.example"} {
				e.run(t, scenario{call: invite(tok, addr, licentia.RoleViewer), wantStatus: http.StatusCreated})
			}
			if got := len(e.mails(t)); got != 3 {
				t.Errorf("mails = %d, want 3", got)
			}
		})
	}
}

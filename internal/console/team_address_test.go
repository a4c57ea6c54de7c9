package console_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// An invitation to an address mail cannot be sent to is refused next to the
// form's email field with the API's message, and nothing is written or
// mailed: not a page saying to try again later.
func TestInviteUnmailableAddress(t *testing.T) {
	const unmailable = `<span class="field-error">Email: must be an address mail can be sent to</span>`
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		owner := e.owner(t)
		for _, addr := range []string{`a"b@x.example`, "a..b@x.example", "a<b@x.example"} {
			a := owner.post(t, "/console/team/invitations", url.Values{"email": {addr}, "role": {"viewer"}})
			wantStatus(t, "invite "+addr, a, http.StatusBadRequest)
			if !strings.Contains(a.body, unmailable) || !strings.Contains(a.body, `value="`+html.EscapeString(addr)+`"`) {
				t.Errorf("invite %s: the form does not show the address and its problem:\n%s", addr, a.body)
			}
		}
		if invs, err := e.store.PendingInvitations(t.Context(), e.org.ID, e.clock.Now()); err != nil || len(invs) != 0 {
			t.Errorf("pending invitations after the refusals = %d, %v; want none", len(invs), err)
		}
	})
}

package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// Form posts from another site are refused before anything is read or
// changed: a browser's Sec-Fetch-Site: cross-site, or an Origin that is
// neither this host nor the base address. A same-origin post, a post from
// the base address's origin (behind a proxy that rewrites Host) and a
// non-browser post without those headers go through.
func TestCrossOriginPostsRefused(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		owner := e.owner(t)
		e.product(t, e.org.ID, "desk-app", "DESK")
		lic := e.issue(t, e.org.ID, "desk-app", "ada@example.com")
		revoke := "/console/licences/" + lic.Licence.ID + "/revoke"
		reason := url.Values{"reason": {"refund"}}
		for _, tt := range []struct {
			name    string
			headers map[string]string
		}{
			{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}},
			{"same-site fetch", map[string]string{"Sec-Fetch-Site": "same-site"}},
			{"foreign origin", map[string]string{"Origin": "https://evil.example"}},
			{"origin of another port", map[string]string{"Origin": "https://127.0.0.1:1"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				a := owner.do(t, http.MethodPost, revoke, reason, tt.headers)
				wantStatus(t, "revoke", a, http.StatusForbidden)
				if !strings.Contains(a.body, "sent from another site") {
					t.Errorf("refusal page does not say why:\n%s", a.body)
				}
				a = e.client().do(t, http.MethodPost, "/console/sign-in",
					url.Values{"email": {"owner@acme.example"}, "password": {password}}, tt.headers)
				wantStatus(t, "sign in", a, http.StatusForbidden)
				wantStatus(t, "customer page", e.client().do(t, http.MethodPost, "/console/purchase",
					url.Values{"email": {"ada@example.com"}, "order_id": {"o-1"}}, tt.headers), http.StatusForbidden)
			})
		}
		if l, err := e.store.Licence(t.Context(), e.org.ID, lic.Licence.ID); err != nil || l.Status != licentia.StatusActive {
			t.Fatalf("licence after refused posts = %+v, %v; want still active", l, err)
		}
		if !owner.signedIn(t) {
			t.Fatal("a refused sign-out signed the owner out")
		}

		for _, tt := range []struct {
			name    string
			headers map[string]string
		}{
			{"same-origin fetch", map[string]string{"Sec-Fetch-Site": "same-origin"}},
			{"own origin", map[string]string{"Origin": e.srv.URL}},
			{"the base address's origin", map[string]string{"Origin": baseURL}},
			{"non-browser client", nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				a := owner.do(t, http.MethodPost, revoke, reason, tt.headers)
				if a.status != http.StatusSeeOther {
					t.Errorf("revoke with %v = %d, want 303:\n%s", tt.headers, a.status, a.body)
				}
			})
		}
	})
}

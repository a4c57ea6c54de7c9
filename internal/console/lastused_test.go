package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/licentia"
)

// TestLastUsedShown: the API keys page and the AI assistants page say
// "never" for a key or grant not used yet, and the minute of its last use
// once a request was authenticated with it.
func TestLastUsedShown(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		owner := e.owner(t)
		key, _, err := e.admin.CreateAPIKey(t.Context(), licentia.OperatorActor, e.org.ID, admin.NewAPIKey{Name: "shop",
			Scopes: []licentia.Scope{licentia.ScopeLicencesRead}})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := e.admin.NewAssistantToken(t.Context(), licentia.OperatorActor, e.org.ID, "owner@acme.example")
		if err != nil {
			t.Fatal(err)
		}
		const never = `data-label="Last used">never<`
		for _, page := range []string{"/console/api-keys", "/console/assistants"} {
			a := owner.get(t, page)
			wantStatus(t, page, a, http.StatusOK)
			if !strings.Contains(a.body, never) {
				t.Errorf("%s before any use does not say never", page)
			}
		}
		e.clock.Advance(3 * time.Minute)
		used := `data-label="Last used">` + e.clock.Now().UTC().Format("2006-01-02 15:04 UTC") + `<`
		authn := auth.NewAuthenticator(e.store, e.clock)
		for _, bearer := range []string{key.Reveal(), tok.Token} {
			if _, err := authn.Authenticate(t.Context(), "Bearer "+bearer); err != nil {
				t.Fatal(err)
			}
		}
		for _, page := range []string{"/console/api-keys", "/console/assistants"} {
			if a := owner.get(t, page); !strings.Contains(a.body, used) || strings.Contains(a.body, never) {
				t.Errorf("%s after a use does not show it (want %s)", page, used)
			}
		}
	})
}

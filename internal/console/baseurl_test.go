package console_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestWebhooksWithoutBaseURL checks that the Webhooks page of a service
// without a public address answers a page saying which variable to set,
// not a bare 503.
func TestWebhooksWithoutBaseURL(t *testing.T) {
	e := newEnv(t, envOptions{noAdminBase: true})
	c := e.owner(t)
	a := c.get(t, "/console/webhooks")
	wantStatus(t, "webhooks", a, http.StatusOK)
	if !strings.Contains(a.body, "LICENTIA_BASE_URL") {
		t.Errorf("the page does not name LICENTIA_BASE_URL:\n%s", a.body)
	}
	if strings.Contains(a.body, `action="/console/webhooks"`) {
		t.Error("the page offers the add form although endpoints cannot be added")
	}
}

// TestBaseURLDefaultedNote checks that while the public address is only
// the listen address, the pages that show or need it say so and name
// LICENTIA_BASE_URL, and that they say nothing of it once it is set.
func TestBaseURLDefaultedNote(t *testing.T) {
	const note = "because <code>LICENTIA_BASE_URL</code> is unset"
	pages := []string{"/console/webhooks", "/console/integrations", "/console/assistants", "/console/"}
	e := newEnv(t, envOptions{consoleBase: "http://127.0.0.1:8080", plain: true, baseDefaulted: true})
	c := e.owner(t)
	for _, p := range pages {
		a := c.get(t, p)
		wantStatus(t, p, a, http.StatusOK)
		if !strings.Contains(a.body, note) || !strings.Contains(a.body, "http://127.0.0.1:8080") {
			t.Errorf("%s does not say the address is the listen address:\n%s", p, a.body)
		}
	}
	e = newEnv(t, envOptions{})
	c = e.owner(t)
	for _, p := range pages {
		if a := c.get(t, p); strings.Contains(a.body, note) {
			t.Errorf("%s warns of an unset LICENTIA_BASE_URL that is set", p)
		}
	}
}

package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/licentia/licentia/internal/servetest"
	"github.com/licentia/licentia/internal/store/storetest"
)

// TestConsentInBrowser walks an AI assistant's authorization as a member
// meets it, on SQLite and on PostgreSQL: the assistant's authorization
// request opens the console's sign-in, then the consent page; Allow sends
// the browser to the assistant's loopback listener with a code, which the
// consent page's Content-Security-Policy must let the form's redirect
// reach. The token works on the API until the member ends the access on
// the AI assistants page.
func TestConsentInBrowser(t *testing.T) {
	b := browser(t)
	t.Run("sqlite", func(t *testing.T) { walkConsent(t, b, servetest.Start(t, ""), true) })
	t.Run("postgres", func(t *testing.T) { walkConsent(t, b, servetest.Start(t, storetest.PostgresURL(t)), false) })
}

func walkConsent(t *testing.T, b context.Context, s *servetest.Service, save bool) {
	org := s.Operator(t, "org", "create", "--name", "Acme Software", "--slug", "acme", "--plan", "studio", "--owner-email", "owner@acme.example")
	owner := person(t, b)
	open(t, owner, org["setup_url"].(string))
	if status := submit(t, owner, "form", map[string]string{"password": "correct horse battery"}); status != http.StatusOK {
		t.Fatalf("setting the password: status %d", status)
	}
	if status := step(t, owner, "sign out", chromedp.Click(chromedp.CSS(`form[action="/console/sign-out"] button`))); status != http.StatusOK {
		t.Fatalf("sign out: status %d", status)
	}

	// The assistant: a loopback listener for the redirect, registered
	// dynamically.
	var mu sync.Mutex
	var got url.Values
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r) // the browser asks for /favicon.ico too
			return
		}
		mu.Lock()
		got = r.URL.Query()
		mu.Unlock()
		w.Write([]byte("<!doctype html><title>Done</title><p>You may close this window."))
	}))
	defer cb.Close()
	redirect := cb.URL + "/callback"
	status, reg := api(t, s, "POST", "/oauth/register", "", map[string]any{"client_name": "Claude Desktop", "redirect_uris": []string{redirect}})
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	conf := &oauth2.Config{ClientID: reg["client_id"].(string), RedirectURL: redirect, Endpoint: oauth2.Endpoint{
		AuthURL: s.Base + "/oauth/authorize", TokenURL: s.Base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("state-42", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", s.Base+"/mcp"))

	open(t, owner, authURL)
	if l := location(t, owner); !strings.HasPrefix(l, s.Base+"/console/sign-in?next=") {
		t.Fatalf("the authorization request opened %s, want the sign-in", l)
	}
	if status := submit(t, owner, `form[action="/console/sign-in"]`, map[string]string{"email": "owner@acme.example", "password": "correct horse battery"}); status != http.StatusOK {
		t.Fatalf("sign in: status %d", status)
	}
	page := text(t, owner, "main")
	for _, want := range []string{"Claude Desktop", strings.TrimPrefix(cb.URL, "http://"), "Acme Software", "owner"} {
		if !strings.Contains(page, want) {
			t.Errorf("the consent page does not name %q:\n%s", want, page)
		}
	}
	shot(t, owner, save, "consent")
	if status := step(t, owner, "allow", chromedp.Click(chromedp.CSS(`button[value="allow"]`))); status != http.StatusOK {
		t.Fatalf("allow: status %d", status)
	}
	if l := location(t, owner); !strings.HasPrefix(l, redirect+"?") {
		t.Fatalf("after allowing: at %s, want the assistant's redirect URI", l)
	}
	mu.Lock()
	q := got
	mu.Unlock()
	if q.Get("state") != "state-42" || q.Get("iss") != s.Base || q.Get("code") == "" {
		t.Fatalf("the assistant got %v, want a code, the state and the issuer", q)
	}
	tok, err := conf.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("Exchange() error = %v", err)
	}
	if status, _ := api(t, s, "GET", "/v1/admin/organization", tok.AccessToken, nil); status != http.StatusOK {
		t.Fatalf("the access token on the API: status %d", status)
	}

	// The member ends the access on the AI assistants page.
	open(t, owner, s.Base+"/console/assistants")
	if !strings.Contains(text(t, owner, "main table"), "Claude Desktop") {
		t.Fatalf("the AI assistants page does not list the grant")
	}
	shot(t, owner, save, "assistants")
	if status := step(t, owner, "end access", chromedp.Click(chromedp.CSS(`form[action^="/console/assistants/"] button`))); status != http.StatusOK {
		t.Fatalf("end access: status %d", status)
	}
	if status, _ := api(t, s, "GET", "/v1/admin/organization", tok.AccessToken, nil); status != http.StatusUnauthorized {
		t.Errorf("the access token after its access ended: status %d, want 401", status)
	}

	// Deny sends the assistant access_denied.
	open(t, owner, conf.AuthCodeURL("state-43", oauth2.S256ChallengeOption(verifier)))
	if status := step(t, owner, "deny", chromedp.Click(chromedp.CSS(`button[value="deny"]`))); status != http.StatusOK {
		t.Fatalf("deny: status %d", status)
	}
	mu.Lock()
	q = got
	mu.Unlock()
	if q.Get("error") != "access_denied" || q.Get("state") != "state-43" {
		t.Errorf("after deny the assistant got %v, want access_denied", q)
	}
	for _, secret := range []string{"correct horse battery", tok.AccessToken, tok.RefreshToken, verifier, "owner@acme.example"} {
		if strings.Contains(s.Logs.String(), secret) {
			t.Errorf("the serve log holds %q", secret)
		}
	}
}

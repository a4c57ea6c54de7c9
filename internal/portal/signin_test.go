package portal_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store/storetest"
)

var requestIDs = regexp.MustCompile(`request [0-9a-f-]{36}`)

// TestSignIn: a known address and an unknown one get the very same page,
// and only the known one a mail, whose link, copied from the raw .eml,
// opens a page without using the link, signs in once by its button with
// the session cookie's attributes, and is refused after.
func TestSignIn(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.issue(t, e.org.ID, "photo", "Ada@Example.com")
		c := e.client()
		known := c.post(t, "/portal/acme/sign-in", url.Values{"email": {"ada@EXAMPLE.com"}})
		unknown := c.post(t, "/portal/acme/sign-in", url.Values{"email": {"nobody@example.com"}})
		wantStatus(t, "known", known, http.StatusOK)
		wantStatus(t, "unknown", unknown, http.StatusOK)
		same := func(a answer, email string) string {
			return strings.ReplaceAll(requestIDs.ReplaceAllString(a.body, ""), email, "EMAIL")
		}
		if same(known, "ada@example.com") != same(unknown, "nobody@example.com") {
			t.Errorf("the page for a known address differs from an unknown one's:\n%s\n---\n%s", known.body, unknown.body)
		}
		mails := e.send(t)
		if len(mails) != 1 || !strings.Contains(mails[0].Header.Get("To"), "ada@example.com") {
			t.Fatalf("outbox holds %d mails, want one to ada@example.com", len(mails))
		}
		if from, err := mails[0].Header.AddressList("From"); err != nil || from[0].Name != "Acme" {
			t.Errorf("From = %q, want the organization's display name", mails[0].Header.Get("From"))
		}
		link := linkTo(t, mails, "ada@example.com")
		token := link[strings.LastIndex(link, "/")+1:]
		if l, err := e.store.PortalLinkByToken(t.Context(), auth.TokenHash(token)); err != nil || string(l.TokenHash) == token {
			t.Errorf("PortalLinkByToken(hash) = %+v, %v; want the link, by its hash", l, err)
		}

		browser := e.client()
		for range 2 {
			a := browser.get(t, link)
			wantStatus(t, "GET link", a, http.StatusOK)
			if !strings.Contains(a.body, `<form method="post"`) || browser.cookie() != nil {
				t.Fatalf("GET link signed in or shows no button:\n%s", a.body)
			}
		}
		a := browser.post(t, link, url.Values{})
		wantSeeOther(t, "POST link", a, "/portal/acme/")
		ck := setCookie(a, "__Host-licentia_portal")
		if ck == nil || !ck.HttpOnly || !ck.Secure || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" ||
			ck.MaxAge != int((12*time.Hour)/time.Second) || ck.Domain != "" {
			t.Errorf("session cookie = %+v, want __Host-licentia_portal, HttpOnly, Secure, SameSite=Lax, Path=/, 12 hours", ck)
		}
		page := browser.get(t, "/portal/acme/")
		wantStatus(t, "licences page", page, http.StatusOK)
		if !strings.Contains(page.body, "Photo Studio") || !strings.Contains(page.body, "ada@example.com") {
			t.Errorf("licences page does not list the licence:\n%s", page.body)
		}

		again := e.client()
		wantStatus(t, "POST used link", again.post(t, link, url.Values{}), http.StatusNotFound)
		wantStatus(t, "GET used link", again.get(t, link), http.StatusNotFound)
		if again.cookie() != nil {
			t.Errorf("a used link set a session cookie")
		}

		// Signed out, the session is gone.
		wantSeeOther(t, "sign out", browser.post(t, "/portal/acme/sign-out", url.Values{}), "/portal/acme/")
		if p := browser.get(t, "/portal/acme/"); !strings.Contains(p.body, `name="email"`) {
			t.Errorf("after sign-out the portal does not ask for an address:\n%s", p.body)
		}
	})
}

func (c *client) cookie() *http.Cookie {
	u, _ := url.Parse(c.e.srv.URL + "/")
	for _, ck := range c.http.Jar.Cookies(u) {
		if strings.HasSuffix(ck.Name, "licentia_portal") {
			return ck
		}
	}
	return nil
}

func setCookie(a answer, name string) *http.Cookie {
	for _, ck := range (&http.Response{Header: a.header}).Cookies() {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

// TestSignInNotMailed: an anonymised licence's address, another
// organization's customer and a malformed address get no mail.
func TestSignInNotMailed(t *testing.T) {
	e := newEnv(t, envOptions{})
	gone := e.issue(t, e.org.ID, "photo", "gone@example.com")
	if _, err := e.admin.AnonymiseLicence(t.Context(), licentia.OperatorActor, e.org.ID, gone.Licence.ID, adminAnonymise()); err != nil {
		t.Fatal(err)
	}
	beta := e.organization(t, "Beta", "beta")
	e.product(t, beta.ID, "betaapp")
	e.issue(t, beta.ID, "betaapp", "bob@example.com")
	c := e.client()
	for _, email := range []string{"gone@example.com", "bob@example.com"} {
		wantStatus(t, email, c.post(t, "/portal/acme/sign-in", url.Values{"email": {email}}), http.StatusOK)
	}
	wantStatus(t, "malformed", c.post(t, "/portal/acme/sign-in", url.Values{"email": {"not an address"}}), http.StatusBadRequest)
	if mails := e.send(t); len(mails) != 0 {
		t.Errorf("outbox holds %d mails, want none", len(mails))
	}
	wantStatus(t, "unknown organization", c.get(t, "/portal/nope/"), http.StatusNotFound)
}

// TestSignInExpired: a link is refused from its 15th minute, and a link
// whose mail could not go out before then is not mailed late.
func TestSignInExpired(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.issue(t, e.org.ID, "photo", "ada@example.com")
	c := e.client()
	c.post(t, "/portal/acme/sign-in", url.Values{"email": {"ada@example.com"}})
	link := linkTo(t, e.send(t), "ada@example.com")
	e.clock.Advance(15 * time.Minute)
	wantStatus(t, "GET expired link", c.get(t, link), http.StatusNotFound)
	wantStatus(t, "POST expired link", c.post(t, link, url.Values{}), http.StatusNotFound)
	if c.cookie() != nil {
		t.Errorf("an expired link set a session cookie")
	}

	c.post(t, "/portal/acme/sign-in", url.Values{"email": {"ada@example.com"}})
	e.clock.Advance(16 * time.Minute)
	if mails := e.send(t); len(mails) != 1 {
		t.Errorf("outbox holds %d mails, want only the first: an expired link is not mailed", len(mails))
	}
}

// TestSignInLimits: 3 links an hour per address, known or not, and 20 an
// hour per client address, an IPv6 client counted by its /64; past either
// a 429 page, and no mail.
func TestSignInLimits(t *testing.T) {
	e := newEnv(t, envOptions{proxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	e.issue(t, e.org.ID, "photo", "ada@example.com")
	for _, email := range []string{"ada@example.com", "nobody@example.com"} {
		c := e.client()
		for i := range 4 {
			c.headers["X-Forwarded-For"] = "192.0.2." + string(rune('1'+i))
			a := c.post(t, "/portal/acme/sign-in", url.Values{"email": {email}})
			want := http.StatusOK
			if i == 3 {
				want = http.StatusTooManyRequests
			}
			wantStatus(t, email, a, want)
		}
	}
	if mails := e.send(t); len(mails) != 3 {
		t.Errorf("outbox holds %d mails, want 3", len(mails))
	}
	c := e.client()
	for i := range 21 {
		c.headers["X-Forwarded-For"] = "2001:db8:1:2::" + string(rune('a'+i%6)) + string(rune('a'+i/6))
		a := c.post(t, "/portal/acme/sign-in", url.Values{"email": {"someone" + string(rune('a'+i)) + "@example.com"}})
		want := http.StatusOK
		if i == 20 {
			want = http.StatusTooManyRequests
		}
		wantStatus(t, "address "+c.headers["X-Forwarded-For"], a, want)
	}
	e.clock.Advance(time.Hour)
	wantStatus(t, "an hour later", c.post(t, "/portal/acme/sign-in", url.Values{"email": {"ada@example.com"}}), http.StatusOK)
}

// TestCrossOrigin: a form posted from another site is refused before
// anything is read or mailed.
func TestCrossOrigin(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.issue(t, e.org.ID, "photo", "ada@example.com")
	c := e.client()
	c.headers["Sec-Fetch-Site"] = "cross-site"
	wantStatus(t, "cross-site sign-in", c.post(t, "/portal/acme/sign-in", url.Values{"email": {"ada@example.com"}}), http.StatusForbidden)
	if mails := e.send(t); len(mails) != 0 {
		t.Errorf("a cross-site post mailed %d links", len(mails))
	}
	s := e.signIn(t, "acme", "ada@example.com")
	s.headers["Origin"] = "https://evil.example"
	s.headers["Sec-Fetch-Site"] = "cross-site"
	v, _ := e.admin.FindLicences(t.Context(), e.org.ID, adminFindEmail("ada@example.com"))
	wantStatus(t, "cross-site reissue", s.post(t, "/portal/acme/licences/"+v[0].ID+"/reissue", url.Values{}), http.StatusForbidden)
}

// TestPlainCookie: over plain HTTP the cookie has no __Host- prefix, and
// the pages carry the console's Content-Security-Policy.
func TestPlainCookie(t *testing.T) {
	e := newEnv(t, envOptions{plain: true})
	e.issue(t, e.org.ID, "photo", "ada@example.com")
	c := e.client()
	a := c.get(t, "/portal/acme/")
	if got := a.header.Get("Content-Security-Policy"); got != "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'" {
		t.Errorf("Content-Security-Policy = %q", got)
	}
	if strings.Contains(a.body, "<script") || strings.Contains(a.body, "style=") {
		t.Errorf("the page holds script or inline style:\n%s", a.body)
	}
	c.post(t, "/portal/acme/sign-in", url.Values{"email": {"ada@example.com"}})
	link := linkTo(t, e.send(t), "ada@example.com")
	ck := setCookie(c.post(t, link, url.Values{}), "licentia_portal")
	if ck == nil || ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
		t.Errorf("cookie = %+v, want licentia_portal, HttpOnly, SameSite=Lax, not Secure", ck)
	}
}

// TestSignInRace: one link posted by many at once signs in exactly once,
// on PostgreSQL, where requests run in parallel.
func TestSignInRace(t *testing.T) {
	e := newEnv(t, envOptions{open: storetest.OpenPostgres})
	e.issue(t, e.org.ID, "photo", "ada@example.com")
	e.client().post(t, "/portal/acme/sign-in", url.Values{"email": {"ada@example.com"}})
	link := linkTo(t, e.send(t), "ada@example.com")
	const racers = 8
	statuses := make([]int, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		c := e.client()
		wg.Go(func() {
			<-start
			statuses[i] = c.post(t, link, url.Values{}).status
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for _, s := range statuses {
		switch s {
		case http.StatusSeeOther:
			won++
		case http.StatusNotFound:
		default:
			t.Errorf("a racer got %d", s)
		}
	}
	if won != 1 {
		t.Errorf("%d racers signed in with one link, want exactly 1 (%v)", won, statuses)
	}
}

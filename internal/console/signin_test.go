package console_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// loopbackProxy trusts the test's own address as a proxy, so each request
// can name its client address in X-Forwarded-For.
var loopbackProxy = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// signInFrom posts a sign-in from client address addr.
func (e *env) signInFrom(t *testing.T, addr, email, pw string) (*client, answer) {
	t.Helper()
	c := e.client()
	c.headers["X-Forwarded-For"] = addr
	return c, c.post(t, "/console/sign-in", url.Values{"email": {email}, "password": {pw}})
}

func TestSignIn(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		e.owner(t)
		wrong := "The email address or the password is wrong."
		for _, tt := range []struct {
			name, email, pw string
			status          int
			want            string
		}{
			{"wrong password", "owner@acme.example", "not the password", http.StatusUnauthorized, wrong},
			{"unknown address", "nobody@acme.example", password, http.StatusUnauthorized, wrong},
			{"address of a member without a password", "viewer@acme.example", password, http.StatusUnauthorized, wrong},
			{"no password", "owner@acme.example", "", http.StatusBadRequest, "is required"},
			{"no address", "", password, http.StatusBadRequest, "is required"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if tt.email == "viewer@acme.example" {
					e.member(t, e.org.ID, tt.email, licentia.RoleViewer)
				}
				c, a := e.signIn(t, tt.email, tt.pw)
				wantStatus(t, "sign in", a, tt.status)
				if !strings.Contains(a.body, tt.want) || strings.Contains(a.body, tt.pw+`"`) && tt.pw != "" {
					t.Errorf("sign-in page lacks %q, or shows the password typed:\n%s", tt.want, a.body)
				}
				if c.sessionCookie() != nil {
					t.Error("a refused sign-in set a session cookie")
				}
			})
		}
		// The address is matched with ASCII letters folded.
		c, a := e.signIn(t, "Owner@ACME.example", password)
		wantSeeOther(t, "sign in", a, "/console/")
		if !c.signedIn(t) {
			t.Error("not signed in after a right password")
		}
	})
}

// After sign-in the member lands where they were going, if it is a page of
// this console (or its authorization pages), never another site.
func TestSignInNext(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.owner(t)
	anon := e.client()
	a := anon.get(t, "/console/licences?q=ada")
	wantSeeOther(t, "page without a session", a, "/console/sign-in?next=%2Fconsole%2Flicences%3Fq%3Dada")
	page := anon.get(t, a.location())
	if !strings.Contains(page.body, `name="next" value="/console/licences?q=ada"`) {
		t.Fatalf("sign-in page does not carry next:\n%s", page.body)
	}
	for next, want := range map[string]string{
		"/console/licences?q=ada": "/console/licences?q=ada",
		"https://evil.example/":   "/console/",
		"//evil.example/console/": "/console/",
		"/oauth/authorize?x=1":    "/oauth/authorize?x=1",
	} {
		c := e.client()
		a := c.post(t, "/console/sign-in", url.Values{"email": {"owner@acme.example"}, "password": {password}, "next": {next}})
		wantSeeOther(t, "sign in to "+next, a, want)
	}
}

// Ten failed sign-ins to one address within a minute, from any client
// addresses, refuse the eleventh with 429 and a page saying to wait, even
// with the right password, until the minute ends.
func TestSignInLimitPerAddress(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		e.owner(t)
		for i := range 10 {
			_, a := e.signInFrom(t, fmt.Sprintf("198.51.100.%d", i+1), "owner@acme.example", "wrong password")
			wantStatus(t, fmt.Sprintf("failure %d", i+1), a, http.StatusUnauthorized)
		}
		c, a := e.signInFrom(t, "203.0.113.50", "OWNER@acme.example", password)
		wantStatus(t, "right password past the limit", a, http.StatusTooManyRequests)
		if !strings.Contains(a.body, "Wait 60 seconds") || a.header.Get("Retry-After") != "60" {
			t.Errorf("429 page lacks the wait (Retry-After %q):\n%s", a.header.Get("Retry-After"), a.body)
		}
		if c.sessionCookie() != nil {
			t.Error("a refused sign-in set a session cookie")
		}
		// Another address is not limited by this one's failures.
		e.member(t, e.org.ID, "viewer@acme.example", licentia.RoleViewer)
		e.signUp(t, e.org.ID, "viewer@acme.example")
		_, a = e.signInFrom(t, "198.51.100.1", "viewer@acme.example", password)
		wantSeeOther(t, "another address", a, "/console/")

		e.clock.Advance(59 * time.Second)
		_, a = e.signInFrom(t, "203.0.113.50", "owner@acme.example", password)
		wantStatus(t, "right password a second before the minute ends", a, http.StatusTooManyRequests)
		e.clock.Advance(time.Second)
		_, a = e.signInFrom(t, "203.0.113.50", "owner@acme.example", password)
		wantSeeOther(t, "right password in the next minute", a, "/console/")
	})
}

// Thirty failed sign-ins from one client address within a minute, to any
// addresses, refuse every sign-in from it until the minute ends.
func TestSignInLimitPerClient(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		e.owner(t)
		const guesser = "198.51.100.7"
		for i := range 30 {
			_, a := e.signInFrom(t, guesser, fmt.Sprintf("someone%d@acme.example", i), "wrong password")
			wantStatus(t, fmt.Sprintf("failure %d", i+1), a, http.StatusUnauthorized)
		}
		_, a := e.signInFrom(t, guesser, "owner@acme.example", password)
		wantStatus(t, "right password from the limited address", a, http.StatusTooManyRequests)
		if !strings.Contains(a.body, "Too many attempts") {
			t.Errorf("429 page does not say to wait:\n%s", a.body)
		}
		_, a = e.signInFrom(t, "198.51.100.8", "owner@acme.example", password)
		wantSeeOther(t, "right password from another address", a, "/console/")
		e.clock.Advance(time.Minute)
		_, a = e.signInFrom(t, guesser, "owner@acme.example", password)
		wantSeeOther(t, "right password in the next minute", a, "/console/")
	})
}

// A successful sign-in counts nothing: a member may sign in often.
func TestSignInSuccessesNotLimited(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.owner(t)
	for i := range 15 {
		_, a := e.signIn(t, "owner@acme.example", password)
		wantSeeOther(t, fmt.Sprintf("sign-in %d", i+1), a, "/console/")
	}
}

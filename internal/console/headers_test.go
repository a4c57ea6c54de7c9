package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

var wantHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
	"X-Frame-Options":         "DENY",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-store",
	"X-Content-Type-Options":  "nosniff",
}

// Every console answer carries the security headers: pages, redirects,
// errors, the stylesheet and refused posts alike.
func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t, envOptions{})
	owner := e.owner(t)
	anon := e.client()
	for _, tt := range []struct {
		name   string
		c      *client
		method string
		path   string
		form   url.Values
		header map[string]string
		status int
	}{
		{"root redirect", anon, "GET", "/", nil, nil, http.StatusFound},
		{"sign-in page", anon, "GET", "/console/sign-in", nil, nil, http.StatusOK},
		{"stylesheet", anon, "GET", "/console/assets/style.css", nil, nil, http.StatusOK},
		{"unknown page", anon, "GET", "/console/nowhere", nil, nil, http.StatusNotFound},
		{"page without a session", anon, "GET", "/console/licences", nil, nil, http.StatusSeeOther},
		{"overview", owner, "GET", "/console/", nil, nil, http.StatusOK},
		{"wrong password", anon, "POST", "/console/sign-in", url.Values{"email": {"owner@acme.example"}, "password": {"nope-nope-nope"}}, nil, http.StatusUnauthorized},
		{"cross-origin post", owner, "POST", "/console/sign-out", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"unknown link", anon, "GET", "/console/setup/nope", nil, nil, http.StatusNotFound},
		{"customer page", anon, "GET", "/console/purchase", nil, nil, http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.c.do(t, tt.method, tt.path, tt.form, tt.header)
			wantStatus(t, tt.name, a, tt.status)
			for k, v := range wantHeaders {
				if got := a.header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if a.status == http.StatusOK && strings.Contains(a.header.Get("Content-Type"), "html") &&
				(strings.Contains(a.body, "<script") || strings.Contains(a.body, "style=")) {
				t.Errorf("page holds a script or an inline style, which the policy blocks")
			}
		})
	}
}

func TestRootRedirectsToConsole(t *testing.T) {
	e := newEnv(t, envOptions{})
	a := e.client().get(t, "/")
	if a.status != http.StatusFound || a.location() != "/console/" {
		t.Errorf("GET / = %d to %q, want 302 to /console/", a.status, a.location())
	}
}

func TestStylesheet(t *testing.T) {
	e := newEnv(t, envOptions{})
	a := e.client().get(t, "/console/assets/style.css")
	wantStatus(t, "stylesheet", a, http.StatusOK)
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") || !strings.Contains(a.body, "font-family") {
		t.Errorf("stylesheet Content-Type %q, body %d bytes; want text/css", ct, len(a.body))
	}
}

// The session cookie is HttpOnly and SameSite=Lax on Path=/, and under an
// https base address Secure with the __Host- prefix.
func TestSessionCookie(t *testing.T) {
	for _, tt := range []struct {
		name   string
		o      envOptions
		cookie string
		secure bool
	}{
		{"https base", envOptions{}, "__Host-licentia_session", true},
		{"http base", envOptions{consoleBase: "http://licentia.internal:8080", plain: true}, "licentia_session", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.o)
			e.owner(t)
			c := e.client()
			a := c.post(t, "/console/sign-in", url.Values{"email": {"owner@acme.example"}, "password": {password}})
			wantSeeOther(t, "sign in", a, "/console/")
			res := &http.Response{Header: a.header}
			var got *http.Cookie
			for _, ck := range res.Cookies() {
				if strings.HasSuffix(ck.Name, "licentia_session") {
					got = ck
				}
			}
			if got == nil {
				t.Fatalf("sign-in set no session cookie; Set-Cookie %q", a.header.Values("Set-Cookie"))
			}
			if got.Name != tt.cookie || got.Secure != tt.secure || !got.HttpOnly || got.SameSite != http.SameSiteLaxMode ||
				got.Path != "/" || got.Domain != "" || len(got.Value) < 40 {
				t.Errorf("session cookie = %+v, want %s, Secure %t, HttpOnly, SameSite=Lax, Path=/, no Domain, a long token",
					got, tt.cookie, tt.secure)
			}
			if a := c.get(t, "/console/"); a.status != http.StatusOK {
				t.Errorf("overview with the cookie = %d, want 200", a.status)
			}
		})
	}
}

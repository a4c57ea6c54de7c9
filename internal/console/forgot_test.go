package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/mail/mailtest"
)

var setupLink = regexp.MustCompile(`^` + regexp.QuoteMeta(baseURL) + `(/console/setup/[0-9A-Za-z_-]{43})$`)

// forgot asks for a password link for email from client address addr.
func (e *env) forgot(t *testing.T, addr, email string) answer {
	t.Helper()
	c := e.client()
	c.headers["X-Forwarded-For"] = addr
	return c.post(t, "/console/forgot-password", url.Values{"email": {email}})
}

// sendMail runs the courier until no mail is due and returns the outbox's
// mails.
func (e *env) sendMail(t *testing.T) []mailtest.Raw {
	t.Helper()
	for {
		n, err := e.courier.RunOnce(t.Context())
		if err != nil {
			t.Fatalf("courier: %v", err)
		}
		if n == 0 {
			return mailtest.Outbox(t, e.outbox)
		}
	}
}

// mailedSetupPath reads the one link of a mail as its text part is
// written, a line of its own, and returns its path.
func mailedSetupPath(t *testing.T, m mailtest.Raw) string {
	t.Helper()
	for _, l := range m.Lines() {
		if s := setupLink.FindStringSubmatch(strings.TrimSpace(l)); s != nil {
			m.CheckStandalone(t, s[0])
			return s[1]
		}
	}
	t.Fatalf("no setup link stands on a line of the mail:\n%s", m.RawText)
	return ""
}

// TestForgotPassword asks for a link as a member who forgot their password:
// the page answers alike for a member and an unknown address, only the
// member is mailed, through the mails table and the courier, and the link
// as written in the raw .eml sets a new password once; the old password
// stops working. The address is never logged.
func TestForgotPassword(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		e.owner(t)
		page := e.client().get(t, "/console/sign-in")
		if !strings.Contains(page.body, `href="/console/forgot-password"`) {
			t.Error("the sign-in page has no Forgot password? link")
		}
		wantStatus(t, "forgot page", e.client().get(t, "/console/forgot-password"), http.StatusOK)

		known := e.forgot(t, "198.51.100.1", "OWNER@acme.example")
		unknown := e.forgot(t, "198.51.100.2", "nobody@acme.example")
		wantStatus(t, "known address", known, http.StatusOK)
		wantStatus(t, "unknown address", unknown, http.StatusOK)
		same := func(a answer, email string) string {
			b := strings.ReplaceAll(a.body, email, "ADDRESS")
			return regexp.MustCompile(`Request [^<]*`).ReplaceAllString(b, "")
		}
		if same(known, "OWNER@acme.example") != same(unknown, "nobody@acme.example") {
			t.Errorf("the answers differ:\n%s\n----\n%s", known.body, unknown.body)
		}

		ms := e.sendMail(t)
		if len(ms) != 1 {
			t.Fatalf("outbox holds %d mails, want the member's one", len(ms))
		}
		if to := ms[0].Header.Get("To"); !strings.Contains(to, "owner@acme.example") {
			t.Fatalf("the mail goes to %q", to)
		}
		if ms[0].HTML == "" || !strings.Contains(ms[0].Text, "new password") {
			t.Errorf("the mail lacks its HTML part or its words:\n%s", ms[0].Text)
		}
		path := mailedSetupPath(t, ms[0])

		c := e.client()
		wantStatus(t, "open the link", c.get(t, path), http.StatusOK)
		wantSeeOther(t, "set the new password", c.post(t, path, url.Values{"password": {"a brand new passphrase"}}), "/console/?done=joined")
		wantStatus(t, "the link again", e.client().get(t, path), http.StatusNotFound)
		_, a := e.signIn(t, "owner@acme.example", password)
		wantStatus(t, "the old password", a, http.StatusUnauthorized)
		_, a = e.signIn(t, "owner@acme.example", "a brand new passphrase")
		wantSeeOther(t, "the new password", a, "/console/")

		if n := len(e.sendMail(t)); n != 1 {
			t.Errorf("outbox holds %d mails after the unknown address's request, want 1", n)
		}
		for _, secret := range []string{"owner@acme.example", "OWNER@acme.example", "nobody@acme.example", path[len("/console/setup/"):]} {
			if strings.Contains(e.logs.String(), secret) {
				t.Errorf("the log holds %q", secret)
			}
		}
	})
}

// TestForgotPasswordExpires checks that a mailed link expires as setup
// links do, on the fake clock, and that a malformed address is refused at
// its field.
func TestForgotPasswordExpires(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.owner(t)
	wantStatus(t, "ask", e.forgot(t, "", "owner@acme.example"), http.StatusOK)
	path := mailedSetupPath(t, e.sendMail(t)[0])
	e.clock.Advance(admin.LoginLinkLifetime - time.Second)
	wantStatus(t, "a second before it expires", e.client().get(t, path), http.StatusOK)
	e.clock.Advance(time.Second)
	wantStatus(t, "once expired", e.client().get(t, path), http.StatusNotFound)

	a := e.forgot(t, "", "not an address")
	wantStatus(t, "malformed address", a, http.StatusBadRequest)
	if !strings.Contains(a.body, `class="field-error"`) {
		t.Errorf("the refusal is not shown at the field:\n%s", a.body)
	}
}

// TestForgotPasswordLimits checks that requests count in the sign-in
// limits: ten for one address from any clients, then 429, and the
// address's sign-in is refused too; thirty from one client to any
// addresses, then 429.
func TestForgotPasswordLimits(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		e.owner(t)
		for i := range 10 {
			wantStatus(t, fmt.Sprintf("request %d", i+1), e.forgot(t, fmt.Sprintf("198.51.100.%d", i+1), "owner@acme.example"), http.StatusOK)
		}
		wantStatus(t, "the eleventh", e.forgot(t, "203.0.113.9", "owner@acme.example"), http.StatusTooManyRequests)
		_, a := e.signInFrom(t, "203.0.113.10", "owner@acme.example", password)
		wantStatus(t, "sign-in of the same address", a, http.StatusTooManyRequests)
		if n := len(e.sendMail(t)); n != 10 {
			t.Errorf("%d mails sent, want 10", n)
		}

		const client = "192.0.2.77"
		for i := range 30 {
			wantStatus(t, fmt.Sprintf("client request %d", i+1), e.forgot(t, client, fmt.Sprintf("x%d@acme.example", i)), http.StatusOK)
		}
		wantStatus(t, "the client's 31st", e.forgot(t, client, "y@acme.example"), http.StatusTooManyRequests)
		e.clock.Advance(time.Minute)
		wantStatus(t, "the next minute", e.forgot(t, client, "y@acme.example"), http.StatusOK)
	})
}

package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/console"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// storedSession reads the client's session from the store, or nil once
// it is gone.
func (c *client) storedSession(t *testing.T) *licentia.Session {
	t.Helper()
	ck := c.sessionCookie()
	if ck == nil {
		return nil
	}
	s, err := c.e.store.SessionByToken(t.Context(), auth.TokenHash(ck.Value))
	if licentia.ErrorCode(err) == licentia.CodeNotFound {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signedIn reports whether the client's session still opens the overview.
func (c *client) signedIn(t *testing.T) bool {
	t.Helper()
	a := c.get(t, "/console/")
	switch {
	case a.status == http.StatusOK:
		return true
	case a.status == http.StatusSeeOther && strings.HasPrefix(a.location(), "/console/sign-in"):
		return false
	}
	t.Fatalf("overview = %d to %q, want 200 or a redirect to sign in", a.status, a.location())
	return false
}

// The session token is kept only as its hash, and the session ends after
// 12 hours without a request: a request at 11:59 keeps it, one after a
// 12-hour silence finds it gone, deleted from the store.
func TestSessionIdleExpiry(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		c := e.owner(t)
		s := c.storedSession(t)
		if s == nil {
			t.Fatal("no stored session after sign-in")
		}
		if string(s.TokenHash) == c.sessionCookie().Value || string(s.TokenHash) != string(auth.TokenHash(c.sessionCookie().Value)) {
			t.Errorf("stored token hash is not the SHA-256 of the cookie's token")
		}
		e.clock.Advance(console.SessionIdle - time.Minute)
		if !c.signedIn(t) {
			t.Fatal("signed out after 11h59m idle, want still signed in")
		}
		e.clock.Advance(console.SessionIdle - time.Millisecond)
		if !c.signedIn(t) {
			t.Fatal("signed out 1ms before 12 hours idle, want still signed in")
		}
		// A request less than a minute after the last write does not write
		// last_seen_at again: idleness counts from the write.
		e.clock.Advance(30 * time.Second)
		if !c.signedIn(t) {
			t.Fatal("signed out 30s after a request")
		}
		e.clock.Advance(console.SessionIdle - 30*time.Second)
		if c.signedIn(t) {
			t.Fatal("still signed in after 12 hours idle")
		}
		if c.storedSession(t) != nil {
			t.Error("the expired session is still stored")
		}
	})
}

// A session ends 7 days after sign-in, however busy.
func TestSessionAbsoluteExpiry(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		c := e.owner(t)
		signedInAt := e.clock.Now()
		for e.clock.Now().Before(signedInAt.Add(console.SessionLifetime - 11*time.Hour)) {
			e.clock.Advance(11 * time.Hour)
			if !c.signedIn(t) {
				t.Fatalf("signed out %v after sign-in, within 7 days and never idle 12 hours", e.clock.Now().Sub(signedInAt))
			}
		}
		e.clock.Set(signedInAt.Add(console.SessionLifetime - time.Millisecond))
		if !c.signedIn(t) {
			t.Fatal("signed out 1ms before 7 days")
		}
		e.clock.Set(signedInAt.Add(console.SessionLifetime))
		if c.signedIn(t) {
			t.Fatal("still signed in 7 days after sign-in")
		}
	})
}

// last_seen_at is written at most once a minute, not on every request.
func TestSessionTouchedOnceAMinute(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.owner(t)
	first := c.storedSession(t).LastSeenAt
	e.clock.Advance(59 * time.Second)
	c.signedIn(t)
	if got := c.storedSession(t).LastSeenAt; !got.Equal(first) {
		t.Errorf("last_seen_at after 59s = %v, want unchanged %v", got, first)
	}
	e.clock.Advance(time.Second)
	c.signedIn(t)
	if got, want := c.storedSession(t).LastSeenAt, first.Add(time.Minute); !got.Equal(want) {
		t.Errorf("last_seen_at after a minute = %v, want %v", got, want)
	}
}

// Signing out deletes the session: the old cookie no longer works even if
// a client kept it.
func TestSignOut(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		c := e.owner(t)
		token := c.sessionCookie().Value
		wantSeeOther(t, "sign out", c.post(t, "/console/sign-out", url.Values{}), "/console/sign-in")
		if c.sessionCookie() != nil {
			t.Error("the session cookie survived signing out")
		}
		if _, err := e.store.SessionByToken(t.Context(), auth.TokenHash(token)); licentia.ErrorCode(err) != licentia.CodeNotFound {
			t.Errorf("SessionByToken() after sign-out error = %v, want not_found", err)
		}
		kept := e.client()
		u, _ := url.Parse(e.srv.URL + "/")
		kept.http.Jar.SetCookies(u, []*http.Cookie{{Name: "__Host-licentia_session", Value: token, Path: "/", Secure: true}})
		if kept.signedIn(t) {
			t.Error("a kept copy of the cookie still signs in after sign-out")
		}
	})
}

// A member of several organizations (one address) switches between them;
// removed from the one the session looks at, the session moves to another,
// and removed from the last, it ends.
func TestOrganizationSwitchAndRemoval(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		other, err := e.admin.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
			Name: "Beta Works", Slug: "beta", Plan: licentia.PlanBusiness, OwnerEmail: "boss@beta.example"})
		if err != nil {
			t.Fatal(err)
		}
		const email = "dev@acme.example"
		e.member(t, e.org.ID, email, licentia.RoleViewer)
		m := e.member(t, other.ID, email, licentia.RoleDeveloper)
		c := e.signUp(t, e.org.ID, email)

		a := c.get(t, "/console/")
		wantStatus(t, "overview", a, http.StatusOK)
		if !strings.Contains(a.body, `<h1>Acme</h1>`) || !strings.Contains(a.body, `value="beta"`) {
			t.Fatalf("overview lacks Acme's name or the switcher to beta:\n%s", a.body)
		}
		wantStatus(t, "switch to an organization not one's own", c.post(t, "/console/organization", url.Values{"org": {"nope"}}), http.StatusBadRequest)
		wantSeeOther(t, "switch", c.post(t, "/console/organization", url.Values{"org": {"beta"}}), "/console/?done=switched")
		a = c.get(t, "/console/")
		if !strings.Contains(a.body, `<h1>Beta Works</h1>`) || !strings.Contains(a.body, "· developer") {
			t.Fatalf("overview after switching is not Beta's, as developer:\n%s", a.body)
		}

		// Removed from Beta, the session moves back to Acme.
		if err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.DeleteMember(t.Context(), other.ID, m.ID) }); err != nil {
			t.Fatal(err)
		}
		a = c.get(t, "/console/")
		if a.status != http.StatusOK || !strings.Contains(a.body, `<h1>Acme</h1>`) {
			t.Fatalf("overview after removal from Beta = %d, want Acme's:\n%s", a.status, a.body)
		}
		if s := c.storedSession(t); s == nil || s.OrgID != e.org.ID {
			t.Errorf("session after removal from Beta = %+v, want it on Acme", s)
		}
		// Removed from Acme too, the session ends.
		acme, err := e.store.MemberByEmail(t.Context(), e.org.ID, email)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.store.InTx(t.Context(), func(tx store.Tx) error { return tx.DeleteMember(t.Context(), e.org.ID, acme.ID) }); err != nil {
			t.Fatal(err)
		}
		if c.signedIn(t) {
			t.Error("still signed in with no organization left")
		}
		if c.storedSession(t) != nil {
			t.Error("the session of an address on no team is still stored")
		}
	})
}

// The role is read on every request: a demotion made elsewhere holds on
// the next request.
func TestRoleReadOnEveryRequest(t *testing.T) {
	e := newEnv(t, envOptions{})
	m := e.member(t, e.org.ID, "admin@acme.example", licentia.RoleAdmin)
	c := e.signUp(t, e.org.ID, "admin@acme.example")
	if a := c.get(t, "/console/team"); !strings.Contains(a.body, `action="/console/team/invitations"`) {
		t.Fatalf("admin sees no invite form:\n%s", a.body)
	}
	if err := e.store.InTx(t.Context(), func(tx store.Tx) error {
		return tx.SetMemberRole(t.Context(), e.org.ID, m.ID, licentia.RoleViewer)
	}); err != nil {
		t.Fatal(err)
	}
	a := c.get(t, "/console/team")
	if strings.Contains(a.body, `action="/console/team/invitations"`) {
		t.Error("a viewer still sees the invite form")
	}
	wantStatus(t, "invite as a viewer", c.post(t, "/console/team/invitations",
		url.Values{"email": {"x@acme.example"}, "role": {"viewer"}}), http.StatusForbidden)
}

// The sweep deletes the sessions no request can use any more, and only
// those.
func TestSweepSessions(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		idle := e.owner(t)
		e.clock.Advance(time.Hour)
		busy := e.as(t, licentia.RoleViewer)
		e.clock.Advance(console.SessionIdle - time.Hour + time.Millisecond)
		n, err := e.console.SweepSessions(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("SweepSessions() = %d, %v; want the one idle session", n, err)
		}
		if idle.storedSession(t) != nil || busy.storedSession(t) == nil {
			t.Error("the sweep deleted the wrong session")
		}
		if !busy.signedIn(t) {
			t.Error("the session the sweep kept does not work")
		}
	})
}

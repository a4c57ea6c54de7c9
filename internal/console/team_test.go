package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// An admin invites from the team page; the invitee opens the mailed link,
// sets a password with the form's field password, and is signed in as a
// member with the invited role. The link then no longer works, and every
// team change lands in the organization's audit log.
func TestInviteAndJoin(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		owner := e.owner(t)
		wantSeeOther(t, "invite", owner.post(t, "/console/team/invitations",
			url.Values{"email": {"new@acme.example"}, "role": {"developer"}}), "/console/team?done=invited")
		team := owner.get(t, "/console/team")
		if !strings.Contains(team.body, "new@acme.example") || !strings.Contains(team.body, "/revoke") {
			t.Fatalf("team page lacks the pending invitation:\n%s", team.body)
		}
		link := e.mail.link(t, "new@acme.example")

		c := e.client()
		page := c.get(t, link)
		wantStatus(t, "open the invitation", page, http.StatusOK)
		if !strings.Contains(page.body, `name="password"`) || !strings.Contains(page.body, "Acme") || !strings.Contains(page.body, "developer") {
			t.Fatalf("invitation page lacks the password field, the organization or the role:\n%s", page.body)
		}
		a := c.post(t, link, url.Values{"password": {"short"}})
		wantStatus(t, "too short a password", a, http.StatusBadRequest)
		if !strings.Contains(a.body, "at least 10 characters") {
			t.Errorf("refused password lacks the rule:\n%s", a.body)
		}
		wantSeeOther(t, "join", c.post(t, link, url.Values{"password": {password}}), "/console/?done=joined")
		over := c.get(t, "/console/?done=joined")
		if !strings.Contains(over.body, "new@acme.example · developer") {
			t.Errorf("the new member is not signed in as a developer:\n%s", over.body)
		}
		// The link is used: a second use, or another browser, gets 404.
		for _, a := range []answer{e.client().get(t, link), e.client().post(t, link, url.Values{"password": {password}})} {
			wantStatus(t, "used link", a, http.StatusNotFound)
			if !strings.Contains(a.body, "This link does not work") {
				t.Errorf("used link page does not say so:\n%s", a.body)
			}
		}
		// The new member signs in with the password set.
		_, a = e.signIn(t, "new@acme.example", password)
		wantSeeOther(t, "sign in", a, "/console/")

		log := owner.get(t, "/console/audit")
		for _, action := range []string{"invitation.created", "member.added"} {
			if !strings.Contains(log.body, action) {
				t.Errorf("audit log lacks %s:\n%s", action, log.body)
			}
		}
	})
}

// The team's changes from the console: revoke an invitation (its link stops
// working), change a role (which ends the member's sessions), remove a
// member; the team rules hold: no acting on oneself, nor on an owner.
func TestTeamChanges(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		owner := e.owner(t)
		ownerMember, err := e.store.MemberByEmail(t.Context(), e.org.ID, "owner@acme.example")
		if err != nil {
			t.Fatal(err)
		}
		wantSeeOther(t, "invite", owner.post(t, "/console/team/invitations",
			url.Values{"email": {"gone@acme.example"}, "role": {"viewer"}}), "/console/team?done=invited")
		link := e.mail.link(t, "gone@acme.example")
		invs, err := e.store.PendingInvitations(t.Context(), e.org.ID, e.clock.Now())
		if err != nil || len(invs) != 1 {
			t.Fatalf("PendingInvitations() = %v, %v", invs, err)
		}
		wantSeeOther(t, "revoke invitation", owner.post(t, "/console/team/invitations/"+invs[0].ID+"/revoke", url.Values{}),
			"/console/team?done=invitation-revoked")
		wantStatus(t, "revoked link", e.client().get(t, link), http.StatusNotFound)

		dev := e.member(t, e.org.ID, "dev@acme.example", licentia.RoleDeveloper)
		devClient := e.signUp(t, e.org.ID, "dev@acme.example")
		wantSeeOther(t, "change role", owner.post(t, "/console/team/members/"+dev.ID+"/role", url.Values{"role": {"support"}}),
			"/console/team?done=role-changed")
		if m, _ := e.store.Member(t.Context(), e.org.ID, dev.ID); m.Role != licentia.RoleSupport {
			t.Errorf("role after change = %s, want support", m.Role)
		}
		if devClient.signedIn(t) {
			t.Error("a role change left the member's session open")
		}
		wantMemberActor(t, e, "member.role_changed", ownerMember.ID)

		for _, tt := range []struct {
			name   string
			path   string
			form   url.Values
			status int
			want   string
		}{
			{"give owner", "/console/team/members/" + dev.ID + "/role", url.Values{"role": {"owner"}}, http.StatusBadRequest, "owner is never given"},
			{"not a role", "/console/team/members/" + dev.ID + "/role", url.Values{"role": {"boss"}}, http.StatusBadRequest, "must be one of"},
			{"change oneself", "/console/team/members/" + ownerMember.ID + "/role", url.Values{"role": {"admin"}}, http.StatusForbidden, "themselves"},
			{"remove oneself", "/console/team/members/" + ownerMember.ID + "/remove", url.Values{}, http.StatusForbidden, "themselves"},
			{"unknown member", "/console/team/members/" + licentia.NewID() + "/remove", url.Values{}, http.StatusNotFound, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				a := owner.post(t, tt.path, tt.form)
				wantStatus(t, tt.name, a, tt.status)
				if !strings.Contains(a.body, tt.want) {
					t.Errorf("%s lacks %q:\n%s", tt.name, tt.want, a.body)
				}
			})
		}

		// An admin cannot act on the owner.
		admin := e.as(t, licentia.RoleAdmin)
		a := admin.post(t, "/console/team/members/"+ownerMember.ID+"/remove", url.Values{})
		wantStatus(t, "admin removes the owner", a, http.StatusForbidden)
		if !strings.Contains(a.body, "An owner cannot be changed or removed.") {
			t.Errorf("refusal lacks the rule:\n%s", a.body)
		}
		team := admin.get(t, "/console/team")
		if strings.Contains(team.body, "/console/team/members/"+ownerMember.ID+"/remove") {
			t.Error("the admin is offered to remove the owner")
		}

		wantSeeOther(t, "remove", owner.post(t, "/console/team/members/"+dev.ID+"/remove", url.Values{}), "/console/team?done=removed")
		if _, err := e.store.Member(t.Context(), e.org.ID, dev.ID); licentia.ErrorCode(err) != licentia.CodeMemberNotFound {
			t.Errorf("Member() after removal error = %v, want member_not_found", err)
		}
	})
}

// An invitation to an address that already has a console password asks
// for that password, and a wrong one counts as a failed sign-in.
func TestJoinWithExistingAccount(t *testing.T) {
	e := newEnv(t, envOptions{proxies: loopbackProxy})
	other := e.otherOrg(t)
	e.signUp(t, other.ID, "boss@beta.example")
	owner := e.owner(t)
	wantSeeOther(t, "invite", owner.post(t, "/console/team/invitations",
		url.Values{"email": {"boss@beta.example"}, "role": {"support"}}), "/console/team?done=invited")
	link := e.mail.link(t, "boss@beta.example")
	c := e.client()
	c.headers["X-Forwarded-For"] = "198.51.100.9"
	page := c.get(t, link)
	if !strings.Contains(page.body, "already has a password") || !strings.Contains(page.body, `autocomplete="current-password"`) {
		t.Fatalf("invitation page does not ask for the current password:\n%s", page.body)
	}
	for i := range 10 {
		a := c.post(t, link, url.Values{"password": {fmt.Sprintf("wrong password %d", i)}})
		wantStatus(t, "wrong password", a, http.StatusUnauthorized)
	}
	wantStatus(t, "right password past the limit", c.post(t, link, url.Values{"password": {password}}), http.StatusTooManyRequests)
	_, a := e.signInFrom(t, "203.0.113.9", "boss@beta.example", password)
	wantStatus(t, "sign-in to the limited address", a, http.StatusTooManyRequests)

	e.clock.Advance(60e9)
	wantSeeOther(t, "join with the right password", c.post(t, link, url.Values{"password": {password}}), "/console/?done=joined")
	over := c.get(t, "/console/")
	if !strings.Contains(over.body, `value="acme"`) || !strings.Contains(over.body, `value="beta"`) {
		t.Errorf("the member of two organizations has no switcher:\n%s", over.body)
	}
}

// Unknown setup and invitation links answer a clear 404 page.
func TestUnknownLinks(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client()
	for _, path := range []string{"/console/setup/nope", "/console/join/nope", "/console/setup/" + strings.Repeat("a", 43)} {
		for _, a := range []answer{c.get(t, path), c.post(t, path, url.Values{"password": {password}})} {
			wantStatus(t, path, a, http.StatusNotFound)
			if !strings.Contains(a.body, "This link does not work") {
				t.Errorf("%s page does not explain:\n%s", path, a.body)
			}
		}
	}
	// A setup link works once, and not after 24 hours.
	link := e.setupLink(t, e.org.ID, "owner@acme.example")
	e.clock.Advance(24 * 3600e9)
	wantStatus(t, "expired setup link", c.get(t, link), http.StatusNotFound)
}

// Every role rule of the team routes, in the console as on the API: a role
// without members:write is refused each team form naming its role; an admin
// never gives owner, never acts on themself or on an owner, and may act on
// another admin.
func TestTeamRoleRulesInTheConsole(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		e := newEnv(t, o)
		owner := e.owner(t)
		wantSeeOther(t, "invite", owner.post(t, "/console/team/invitations",
			url.Values{"email": {"pending@acme.example"}, "role": {"viewer"}}), "/console/team?done=invited")
		invs, err := e.store.PendingInvitations(t.Context(), e.org.ID, e.clock.Now())
		if err != nil || len(invs) != 1 {
			t.Fatalf("PendingInvitations() = %v, %v", invs, err)
		}
		target := e.member(t, e.org.ID, "target@acme.example", licentia.RoleViewer)
		posts := func(id string) map[string]url.Values {
			return map[string]url.Values{
				"/console/team/invitations":                           {"email": {"x@acme.example"}, "role": {"viewer"}},
				"/console/team/invitations/" + invs[0].ID + "/revoke": {},
				"/console/team/members/" + id + "/role":               {"role": {"support"}},
				"/console/team/members/" + id + "/remove":             {},
			}
		}
		for _, role := range []licentia.Role{licentia.RoleViewer, licentia.RoleSupport, licentia.RoleDeveloper} {
			c := e.as(t, role)
			for path, form := range posts(target.ID) {
				a := c.post(t, path, form)
				if a.status != http.StatusForbidden || !strings.Contains(a.body, "The "+string(role)+" role cannot") {
					t.Errorf("%s posts %s: %d, want 403 naming the role:\n%s", role, path, a.status, a.body)
				}
			}
		}
		if m, err := e.store.Member(t.Context(), e.org.ID, target.ID); err != nil || m.Role != licentia.RoleViewer {
			t.Errorf("target after the refused posts = %+v, %v", m, err)
		}

		admin := e.as(t, licentia.RoleAdmin)
		self, err := e.store.MemberByEmail(t.Context(), e.org.ID, "admin@acme.example")
		if err != nil {
			t.Fatal(err)
		}
		other := e.member(t, e.org.ID, "other-admin@acme.example", licentia.RoleAdmin)
		ownerMember, _ := e.store.MemberByEmail(t.Context(), e.org.ID, "owner@acme.example")
		for _, tt := range []struct {
			name, path string
			form       url.Values
			status     int
		}{
			{"give owner", "/console/team/members/" + target.ID + "/role", url.Values{"role": {"owner"}}, http.StatusBadRequest},
			{"invite an owner", "/console/team/invitations", url.Values{"email": {"o@acme.example"}, "role": {"owner"}}, http.StatusBadRequest},
			{"change oneself", "/console/team/members/" + self.ID + "/role", url.Values{"role": {"viewer"}}, http.StatusForbidden},
			{"remove oneself", "/console/team/members/" + self.ID + "/remove", url.Values{}, http.StatusForbidden},
			{"change the owner", "/console/team/members/" + ownerMember.ID + "/role", url.Values{"role": {"admin"}}, http.StatusForbidden},
			{"another organization's member", "/console/team/members/" + e.ownerOf(t, e.otherOrg(t)) + "/remove", url.Values{}, http.StatusNotFound},
			{"change another admin", "/console/team/members/" + other.ID + "/role", url.Values{"role": {"developer"}}, http.StatusSeeOther},
			{"remove another admin", "/console/team/members/" + other.ID + "/remove", url.Values{}, http.StatusSeeOther},
		} {
			wantStatus(t, tt.name, admin.post(t, tt.path, tt.form), tt.status)
		}
	})
}

// ownerOf is the id of an organization's owner.
func (e *env) ownerOf(t *testing.T, o *licentia.Organization) string {
	t.Helper()
	ms, err := e.store.Members(t.Context(), o.ID)
	if err != nil || len(ms) == 0 {
		t.Fatalf("Members() = %v, %v", ms, err)
	}
	return ms[0].ID
}

package licentia_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
)

func TestRoleScopes(t *testing.T) {
	const (
		v = licentia.RoleViewer
		s = licentia.RoleSupport
		d = licentia.RoleDeveloper
		a = licentia.RoleAdmin
		o = licentia.RoleOwner
	)
	// Every scope with the roles holding it, as decisions.md "Team and roles" has them.
	holders := map[licentia.Scope][]licentia.Role{
		licentia.ScopeProductsRead:      {v, s, d, a, o},
		licentia.ScopeLicencesRead:      {v, s, d, a, o},
		licentia.ScopeAuditRead:         {v, s, d, a, o},
		licentia.ScopeProviderRead:      {v, s, d, a, o},
		licentia.ScopeOrganizationRead:  {v, s, d, a, o},
		licentia.ScopeMembersRead:       {v, s, d, a, o},
		licentia.ScopeWebhooksRead:      {v, s, d, a, o},
		licentia.ScopeLicencesWrite:     {s, d, a, o},
		licentia.ScopeProductsWrite:     {d, a, o},
		licentia.ScopeProviderWrite:     {d, a, o},
		licentia.ScopeWebhooksWrite:     {d, a, o},
		licentia.ScopeLicencesAnonymise: {a, o},
		licentia.ScopeMembersWrite:      {a, o},
	}
	if len(holders) != len(licentia.Scopes) {
		t.Fatalf("table has %d scopes, the contract %d", len(holders), len(licentia.Scopes))
	}
	for _, r := range licentia.Roles {
		var want []licentia.Scope
		for _, sc := range licentia.Scopes {
			held, ok := holders[sc]
			if !ok {
				t.Fatalf("scope %q missing from the table", sc)
			}
			wantHas := slices.Contains(held, r)
			if got := r.HasScope(sc); got != wantHas {
				t.Errorf("%s.HasScope(%s) = %v, want %v", r, sc, got, wantHas)
			}
			if wantHas {
				want = append(want, sc)
			}
		}
		slices.Sort(want)
		got := r.Scopes()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s.Scopes() mismatch (-want +got):\n%s", r, diff)
		}
		if len(got) > 0 {
			got[0] = "changed"
			if r.Scopes()[0] == "changed" {
				t.Errorf("%s.Scopes() shares its slice", r)
			}
		}
	}
	for _, r := range []licentia.Role{"", "Owner", "root"} {
		if got := r.Scopes(); len(got) != 0 {
			t.Errorf("Role(%q).Scopes() = %v, want none", r, got)
		}
		if r.HasScope(licentia.ScopeProductsRead) {
			t.Errorf("Role(%q).HasScope(products:read) = true, want false", r)
		}
	}
	for _, r := range licentia.Roles {
		for _, sc := range []licentia.Scope{"", "admin", "licences:*", "PRODUCTS:READ"} {
			if r.HasScope(sc) {
				t.Errorf("%s.HasScope(%q) = true, want false", r, sc)
			}
		}
	}
}

func TestRoleRank(t *testing.T) {
	want := []licentia.Role{"viewer", "support", "developer", "admin", "owner"}
	if diff := cmp.Diff(want, licentia.Roles); diff != "" {
		t.Fatalf("Roles mismatch (-want +got):\n%s", diff)
	}
	for i, r := range licentia.Roles {
		if got := r.Rank(); got != i+1 {
			t.Errorf("%s.Rank() = %d, want %d", r, got, i+1)
		}
		for j, other := range licentia.Roles {
			if got := r.AtLeast(other); got != (i >= j) {
				t.Errorf("%s.AtLeast(%s) = %v, want %v", r, other, got, i >= j)
			}
		}
		if !r.AtLeast("nobody") {
			t.Errorf("%s.AtLeast(nobody) = false, want true", r)
		}
		if licentia.Role("nobody").AtLeast(r) {
			t.Errorf("nobody.AtLeast(%s) = true, want false", r)
		}
	}
	if got := licentia.Role("nobody").Rank(); got != 0 {
		t.Errorf("nobody.Rank() = %d, want 0", got)
	}
	for _, tt := range []struct {
		role                     licentia.Role
		integrations, keys, plan bool
	}{
		{licentia.RoleViewer, false, false, false},
		{licentia.RoleSupport, false, false, false},
		{licentia.RoleDeveloper, false, false, false},
		{licentia.RoleAdmin, true, false, false},
		{licentia.RoleOwner, true, true, true},
		{"nobody", false, false, false},
	} {
		if got := tt.role.CanConnectIntegrations(); got != tt.integrations {
			t.Errorf("%s.CanConnectIntegrations() = %v, want %v", tt.role, got, tt.integrations)
		}
		if got := tt.role.CanManageAPIKeys(); got != tt.keys {
			t.Errorf("%s.CanManageAPIKeys() = %v, want %v", tt.role, got, tt.keys)
		}
		if got := tt.role.CanManagePlan(); got != tt.plan {
			t.Errorf("%s.CanManagePlan() = %v, want %v", tt.role, got, tt.plan)
		}
	}
}

func TestParseRole(t *testing.T) {
	for _, r := range licentia.Roles {
		if got, ok := licentia.ParseRole(string(r)); !ok || got != r {
			t.Errorf("ParseRole(%q) = %q, %v, want %q, true", r, got, ok, r)
		}
	}
	for _, s := range []string{"", "Owner", "ADMIN", " admin", "admin ", "member", "superadmin", "viewer,admin"} {
		if _, ok := licentia.ParseRole(s); ok {
			t.Errorf("ParseRole(%q) ok, want refused", s)
		}
	}
}

func TestCheckGivenRole(t *testing.T) {
	for _, s := range []string{"viewer", "support", "developer", "admin"} {
		if msg := licentia.CheckGivenRole(s); msg != "" {
			t.Errorf("CheckGivenRole(%q) = %q, want none", s, msg)
		}
	}
	for _, s := range []string{"owner", "", "Admin", "root"} {
		if msg := licentia.CheckGivenRole(s); msg == "" {
			t.Errorf("CheckGivenRole(%q) = none, want a message", s)
		}
	}
}

func TestCanChangeMember(t *testing.T) {
	role := func(r licentia.Role) *licentia.Role { return &r }
	const (
		v = licentia.RoleViewer
		s = licentia.RoleSupport
		d = licentia.RoleDeveloper
		a = licentia.RoleAdmin
		o = licentia.RoleOwner
	)
	for _, tt := range []struct {
		name    string
		caller  licentia.Role
		target  licentia.Role
		newRole *licentia.Role
		self    bool
		want    licentia.Code // "" for allowed
	}{
		{"viewer removes", v, v, nil, false, licentia.CodeInsufficientRole},
		{"support changes", s, v, role(v), false, licentia.CodeInsufficientRole},
		{"developer removes", d, v, nil, false, licentia.CodeInsufficientRole},
		{"developer on self", d, d, nil, true, licentia.CodeInsufficientRole},
		{"developer gives owner", d, v, role(o), false, licentia.CodeInsufficientRole},
		{"unknown caller", "nobody", v, nil, false, licentia.CodeInsufficientRole},
		{"admin gives owner", a, v, role(o), false, licentia.CodeValidationFailed},
		{"owner gives owner", o, a, role(o), false, licentia.CodeValidationFailed},
		{"owner gives unknown role", o, a, role("root"), false, licentia.CodeValidationFailed},
		{"owner gives empty role", o, a, role(""), false, licentia.CodeValidationFailed},
		{"admin gives owner to self", a, a, role(o), true, licentia.CodeValidationFailed},
		{"admin removes self", a, a, nil, true, licentia.CodeForbidden},
		{"admin changes own role", a, a, role(v), true, licentia.CodeForbidden},
		{"owner removes self", o, o, nil, true, licentia.CodeForbidden},
		{"admin removes owner", a, o, nil, false, licentia.CodeForbidden},
		{"owner removes owner", o, o, nil, false, licentia.CodeForbidden},
		{"owner changes owner", o, o, role(a), false, licentia.CodeForbidden},
		{"admin gives developer", a, v, role(d), false, ""},
		{"admin gives admin", a, v, role(a), false, ""},
		{"admin lowers admin", a, a, role(s), false, ""},
		{"admin removes admin", a, a, nil, false, ""},
		{"admin removes viewer", a, v, nil, false, ""},
		{"owner gives admin", o, d, role(a), false, ""},
		{"owner lowers admin", o, a, role(v), false, ""},
		{"owner removes admin", o, a, nil, false, ""},
		{"admin invites admin", a, "", role(a), false, ""},
		{"admin invites owner", a, "", role(o), false, licentia.CodeValidationFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := licentia.CanChangeMember(tt.caller, tt.target, tt.newRole, tt.self)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CanChangeMember() = %v, want nil", err)
				}
				return
			}
			e, ok := errors.AsType[*licentia.Error](err)
			if !ok {
				t.Fatalf("CanChangeMember() = %v, want a %s *Error", err, tt.want)
			}
			if e.Code != tt.want {
				t.Fatalf("CanChangeMember() code = %s, want %s", e.Code, tt.want)
			}
			switch tt.want {
			case licentia.CodeInsufficientRole:
				if diff := cmp.Diff(map[string]any{"role": string(tt.caller)}, e.Details); diff != "" {
					t.Errorf("details mismatch (-want +got):\n%s", diff)
				}
			case licentia.CodeValidationFailed:
				if diff := cmp.Diff([]string{"/role"}, issuePaths(t, err)); diff != "" {
					t.Errorf("issue paths mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestCanChangeMemberAboveCaller(t *testing.T) {
	// Among the roles that hold members:write, a target or a new role above
	// the caller's own is insufficient_role; at or below is allowed.
	for _, caller := range licentia.Roles {
		if !caller.HasScope(licentia.ScopeMembersWrite) {
			continue
		}
		for _, other := range licentia.Roles {
			if other == licentia.RoleOwner {
				continue
			}
			want := licentia.Code("")
			if !caller.AtLeast(other) {
				want = licentia.CodeInsufficientRole
			}
			for name, err := range map[string]error{
				"target":     licentia.CanChangeMember(caller, other, nil, false),
				"new role":   licentia.CanChangeMember(caller, licentia.RoleViewer, &other, false),
				"invitation": licentia.CanInvite(caller, other),
			} {
				got := licentia.Code("")
				if err != nil {
					got = licentia.ErrorCode(err)
				}
				if got != want {
					t.Errorf("%s %s by %s: code %q, want %q", name, other, caller, got, want)
				}
			}
		}
	}
}

func TestCanInvite(t *testing.T) {
	for _, tt := range []struct {
		caller, role licentia.Role
		want         licentia.Code
	}{
		{licentia.RoleDeveloper, licentia.RoleViewer, licentia.CodeInsufficientRole},
		{licentia.RoleAdmin, licentia.RoleOwner, licentia.CodeValidationFailed},
		{licentia.RoleOwner, "root", licentia.CodeValidationFailed},
		{licentia.RoleAdmin, licentia.RoleAdmin, ""},
		{licentia.RoleOwner, licentia.RoleViewer, ""},
	} {
		err := licentia.CanInvite(tt.caller, tt.role)
		got := licentia.Code("")
		if err != nil {
			got = licentia.ErrorCode(err)
		}
		if got != tt.want {
			t.Errorf("CanInvite(%s, %s) code %q, want %q", tt.caller, tt.role, got, tt.want)
		}
	}
}

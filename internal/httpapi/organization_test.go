package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// planLimits are decisions.md's default plans, written out again so a change
// to licentia.DefaultPlans shows here.
var planLimits = map[licentia.PlanID]string{
	licentia.PlanFree:     `{"active_licences":25,"products":1,"api_keys":2,"integrations":1,"webhook_endpoints":1,"team_places":1}`,
	licentia.PlanIndie:    `{"active_licences":1000,"products":5,"api_keys":10,"integrations":2,"webhook_endpoints":3,"team_places":3}`,
	licentia.PlanStudio:   `{"active_licences":25000,"products":25,"api_keys":25,"integrations":5,"webhook_endpoints":10,"team_places":10}`,
	licentia.PlanBusiness: `{"active_licences":1000000,"products":100,"api_keys":100,"integrations":20,"webhook_endpoints":25,"team_places":50}`,
}

var teamPlaceLimits = map[licentia.PlanID]int{
	licentia.PlanFree: 1, licentia.PlanIndie: 3, licentia.PlanStudio: 10, licentia.PlanBusiness: 50,
}

func TestOrganization(t *testing.T) {
	e := newTestEnv(t)
	for _, plan := range []licentia.PlanID{licentia.PlanFree, licentia.PlanIndie, licentia.PlanStudio, licentia.PlanBusiness} {
		t.Run(string(plan), func(t *testing.T) {
			o := e.createOrg(t, "plan-"+string(plan), plan)
			key := e.key(t, o.ID, licentia.ScopeOrganizationRead)
			e.run(t, scenario{
				call:       call{method: "GET", path: "/v1/admin/organization", key: key},
				wantStatus: http.StatusOK,
				wantBody: fmt.Sprintf(`{"organization":{"id":%q,"name":"Org plan-%s","slug":"plan-%s","plan":%q,`+
					`"team_places":{"limit":%d,"used":1},"limits":%s,"created_at":"2026-03-02T09:00:00.000Z",`+
					`"branding":{"display_name":"Org plan-%s","support_email":null,"logo_url":null,"accent":null}}}`,
					o.ID, plan, plan, plan, teamPlaceLimits[plan], planLimits[plan], plan),
			})
		})
	}
}

// TestTeamPlaces: team places used are members plus pending invitations;
// an invitation past its expiry no longer counts.
func TestTeamPlaces(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeOrganizationRead)
	used := func(t *testing.T, want int) {
		t.Helper()
		r := e.send(t, call{method: "GET", path: "/v1/admin/organization", key: key})
		org := r.json(t).(map[string]any)["organization"].(map[string]any)
		if got := org["team_places"].(map[string]any)["used"]; got != float64(want) {
			t.Errorf("team_places.used = %v, want %d", got, want)
		}
	}
	used(t, 1)
	addMember(t, e.store, e.org.ID, "aaaaaaaa-0000-4000-8000-000000000001", "admin@acme.example", start.Add(time.Minute))
	addInvitation(t, e.store, e.org.ID, "bbbbbbbb-0000-4000-8000-000000000001", "soon@acme.example", start, start.Add(time.Hour))
	addInvitation(t, e.store, e.org.ID, "bbbbbbbb-0000-4000-8000-000000000002", "gone@acme.example", start.Add(-2*time.Hour), start.Add(-time.Hour))
	used(t, 3)
	e.clock.Advance(time.Hour)
	used(t, 2)
}

// TestMembers: members oldest first, with id, email, role and created_at.
func TestMembers(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeMembersRead)
	members, err := e.store.Members(t.Context(), e.org.ID)
	if err != nil || len(members) != 1 {
		t.Fatalf("Members() = %v, %v; want the owner", members, err)
	}
	owner := members[0]
	// Ids run against time, so the order can only come from created_at.
	addMember(t, e.store, e.org.ID, "00000000-0000-4000-8000-000000000009", "late@acme.example", start.Add(time.Hour))
	addMember(t, e.store, e.org.ID, "ffffffff-0000-4000-8000-000000000001", "early@acme.example", start.Add(-time.Hour))

	e.run(t, scenario{
		call:       call{method: "GET", path: "/v1/admin/members", key: key},
		wantStatus: http.StatusOK,
		wantBody: fmt.Sprintf(`{"members":[
			{"id":"ffffffff-0000-4000-8000-000000000001","email":"early@acme.example","role":"admin","created_at":"2026-03-02T08:00:00.000Z"},
			{"id":%q,"email":"owner@acme.example","role":"owner","created_at":"2026-03-02T09:00:00.000Z"},
			{"id":"00000000-0000-4000-8000-000000000009","email":"late@acme.example","role":"admin","created_at":"2026-03-02T10:00:00.000Z"}]}`,
			owner.ID),
	})
}

// TestInvitations: pending invitations oldest first; none is an empty list.
func TestInvitations(t *testing.T) {
	e := newTestEnv(t)
	key := e.key(t, e.org.ID, licentia.ScopeMembersRead)
	list := call{method: "GET", path: "/v1/admin/invitations", key: key}
	e.run(t, scenario{call: list, wantStatus: http.StatusOK, wantBody: `{"invitations":[]}`})

	addInvitation(t, e.store, e.org.ID, "00000000-0000-4000-8000-000000000002", "second@acme.example", start.Add(time.Minute), start.Add(7*24*time.Hour))
	addInvitation(t, e.store, e.org.ID, "ffffffff-0000-4000-8000-000000000002", "first@acme.example", start, start.Add(time.Hour))
	addInvitation(t, e.store, e.org.ID, "11111111-0000-4000-8000-000000000002", "expired@acme.example", start.Add(-48*time.Hour), start.Add(-time.Millisecond))
	e.run(t, scenario{call: list, wantStatus: http.StatusOK, wantBody: `{"invitations":[
		{"id":"ffffffff-0000-4000-8000-000000000002","email":"first@acme.example","role":"admin","expires_at":"2026-03-02T10:00:00.000Z","created_at":"2026-03-02T09:00:00.000Z","accepted_at":null,"revoked_at":null},
		{"id":"00000000-0000-4000-8000-000000000002","email":"second@acme.example","role":"admin","expires_at":"2026-03-09T09:00:00.000Z","created_at":"2026-03-02T09:01:00.000Z","accepted_at":null,"revoked_at":null}]}`})

	e.clock.Set(start.Add(time.Hour))
	e.run(t, scenario{call: list, wantStatus: http.StatusOK, wantBody: `{"invitations":[
		{"id":"00000000-0000-4000-8000-000000000002","email":"second@acme.example","role":"admin","expires_at":"2026-03-09T09:00:00.000Z","created_at":"2026-03-02T09:01:00.000Z","accepted_at":null,"revoked_at":null}]}`})
}

// TestOrganizationIsolation: a key sees only its own organization, team and
// invitations.
func TestOrganizationIsolation(t *testing.T) {
	e := newTestEnv(t)
	other := e.createOrg(t, "globex", licentia.PlanIndie)
	addMember(t, e.store, e.org.ID, "aaaaaaaa-0000-4000-8000-000000000003", "admin@acme.example", start.Add(time.Minute))
	addInvitation(t, e.store, e.org.ID, "bbbbbbbb-0000-4000-8000-000000000003", "new@acme.example", start, start.Add(time.Hour))
	otherMembers, err := e.store.Members(t.Context(), other.ID)
	if err != nil || len(otherMembers) != 1 {
		t.Fatalf("Members(globex) = %v, %v; want the owner", otherMembers, err)
	}
	key := e.key(t, other.ID, licentia.ScopeOrganizationRead, licentia.ScopeMembersRead)

	for _, tt := range []scenario{
		{
			name:       "organization",
			call:       call{method: "GET", path: "/v1/admin/organization", key: key},
			wantStatus: http.StatusOK,
			wantBody: fmt.Sprintf(`{"organization":{"id":%q,"name":"Org globex","slug":"globex","plan":"indie",`+
				`"team_places":{"limit":3,"used":1},"limits":%s,"created_at":"2026-03-02T09:00:00.000Z",`+
				`"branding":{"display_name":"Org globex","support_email":null,"logo_url":null,"accent":null}}}`,
				other.ID, planLimits[licentia.PlanIndie]),
		},
		{
			name:       "members",
			call:       call{method: "GET", path: "/v1/admin/members", key: key},
			wantStatus: http.StatusOK,
			wantBody: fmt.Sprintf(`{"members":[{"id":%q,"email":"owner@globex.example","role":"owner","created_at":"2026-03-02T09:00:00.000Z"}]}`,
				otherMembers[0].ID),
		},
		{
			name:       "invitations",
			call:       call{method: "GET", path: "/v1/admin/invitations", key: key},
			wantStatus: http.StatusOK,
			wantBody:   `{"invitations":[]}`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) { e.run(t, tt) })
	}
}

func addMember(t *testing.T, st store.Store, orgID, id, email string, at time.Time) {
	t.Helper()
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		return tx.CreateMember(t.Context(), &licentia.Member{ID: id, OrgID: orgID, Email: email, Role: licentia.RoleAdmin, CreatedAt: at})
	})
	if err != nil {
		t.Fatalf("CreateMember(%s) error = %v", email, err)
	}
}

func addInvitation(t *testing.T, st store.Store, orgID, id, email string, at, expires time.Time) {
	t.Helper()
	err := st.InTx(t.Context(), func(tx store.Tx) error {
		return tx.CreateInvitation(t.Context(), &licentia.Invitation{
			ID: id, OrgID: orgID, Email: email, Role: licentia.RoleAdmin, ExpiresAt: expires, CreatedAt: at,
		})
	})
	if err != nil {
		t.Fatalf("CreateInvitation(%s) error = %v", email, err)
	}
}

package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/licentia"
)

type organizationAnswer struct {
	Organization organizationJSON `json:"organization"`
}

type organizationJSON struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Slug       string          `json:"slug"`
	Plan       licentia.PlanID `json:"plan"`
	TeamPlaces teamPlacesJSON  `json:"team_places"`
	Limits     limitsJSON      `json:"limits"`
	CreatedAt  string          `json:"created_at"`
}

type teamPlacesJSON struct {
	Limit int64 `json:"limit"`
	Used  int64 `json:"used"`
}

type limitsJSON struct {
	ActiveLicences   int64 `json:"active_licences"`
	Products         int64 `json:"products"`
	APIKeys          int64 `json:"api_keys"`
	Integrations     int64 `json:"integrations"`
	WebhookEndpoints int64 `json:"webhook_endpoints"`
	TeamPlaces       int64 `json:"team_places"`
}

func (s *Server) getOrganization(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	readQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	v, err := s.admin.Organization(r.Context(), callerOf(r).OrgID)
	if err != nil {
		return err
	}
	o, l := v.Organization, v.Limits
	writeJSON(w, http.StatusOK, organizationAnswer{Organization: organizationJSON{
		ID: o.ID, Name: o.Name, Slug: o.Slug, Plan: o.Plan,
		TeamPlaces: teamPlacesJSON{Limit: l.TeamPlaces, Used: v.TeamPlacesUsed},
		Limits: limitsJSON{
			ActiveLicences: l.ActiveLicences, Products: l.Products, APIKeys: l.APIKeys,
			Integrations: l.Integrations, WebhookEndpoints: l.WebhookEndpoints, TeamPlaces: l.TeamPlaces,
		},
		CreatedAt: licentia.FormatTime(o.CreatedAt),
	}})
	return nil
}

type memberJSON struct {
	ID        string        `json:"id"`
	Email     string        `json:"email"`
	Role      licentia.Role `json:"role"`
	CreatedAt string        `json:"created_at"`
}

func (s *Server) listMembers(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	readQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	members, err := s.admin.Members(r.Context(), callerOf(r).OrgID)
	if err != nil {
		return err
	}
	out := make([]memberJSON, len(members))
	for i, m := range members {
		out[i] = memberJSON{ID: m.ID, Email: m.Email, Role: m.Role, CreatedAt: licentia.FormatTime(m.CreatedAt)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"members": out})
	return nil
}

type invitationJSON struct {
	ID        string        `json:"id"`
	Email     string        `json:"email"`
	Role      licentia.Role `json:"role"`
	ExpiresAt string        `json:"expires_at"`
	CreatedAt string        `json:"created_at"`
}

func (s *Server) listInvitations(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	readQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	invs, err := s.admin.Invitations(r.Context(), callerOf(r).OrgID)
	if err != nil {
		return err
	}
	out := make([]invitationJSON, len(invs))
	for i, inv := range invs {
		out[i] = invitationJSON{ID: inv.ID, Email: inv.Email, Role: inv.Role,
			ExpiresAt: licentia.FormatTime(inv.ExpiresAt), CreatedAt: licentia.FormatTime(inv.CreatedAt)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"invitations": out})
	return nil
}

// teamChange is never reached by a key: the route's scope, members:write, is
// never held by one. It answers forbidden for any other caller until team
// management lands.
func (s *Server) teamChange(w http.ResponseWriter, r *http.Request) error {
	return licentia.Errorf(licentia.CodeForbidden, "Team changes are made by a member of the organization.")
}

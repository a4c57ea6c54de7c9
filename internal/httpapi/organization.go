package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
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
	Branding   brandingJSON    `json:"branding"`
}

// brandingJSON is what customers see of the organization; display_name
// is always set, the organization's name when no other was chosen.
type brandingJSON struct {
	DisplayName  string  `json:"display_name"`
	SupportEmail *string `json:"support_email"`
	LogoURL      *string `json:"logo_url"`
	Accent       *string `json:"accent"`
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
	web.ReadQuery(r, &is)
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
		Branding: brandingJSON{DisplayName: o.DisplayName(), SupportEmail: o.Branding.SupportEmail, LogoURL: o.Branding.LogoURL,
			Accent: o.Branding.Accent},
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
	web.ReadQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	members, err := s.admin.Members(r.Context(), callerOf(r).OrgID)
	if err != nil {
		return err
	}
	out := make([]memberJSON, len(members))
	for i := range members {
		out[i] = memberOf(&members[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"members": out})
	return nil
}

type invitationJSON struct {
	ID         string        `json:"id"`
	Email      string        `json:"email"`
	Role       licentia.Role `json:"role"`
	ExpiresAt  string        `json:"expires_at"`
	CreatedAt  string        `json:"created_at"`
	AcceptedAt *string       `json:"accepted_at"`
	RevokedAt  *string       `json:"revoked_at"`
}

func (s *Server) listInvitations(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	web.ReadQuery(r, &is)
	if err := is.Err(); err != nil {
		return err
	}
	invs, err := s.admin.Invitations(r.Context(), callerOf(r).OrgID)
	if err != nil {
		return err
	}
	out := make([]invitationJSON, len(invs))
	for i := range invs {
		out[i] = invitationOf(&invs[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"invitations": out})
	return nil
}

// acting is the member an assistant acts as. Only a member reaches the
// team-changing routes: their scope, members:write, is never a key's.
func acting(r *http.Request) admin.Acting {
	c := callerOf(r)
	return admin.Acting{OrgID: c.OrgID, MemberID: c.MemberID, Assistant: c.Assistant}
}

type invitationAnswer struct {
	Invitation invitationJSON `json:"invitation"`
}

func invitationOf(inv *licentia.Invitation) invitationJSON {
	return invitationJSON{ID: inv.ID, Email: inv.Email, Role: inv.Role,
		ExpiresAt: licentia.FormatTime(inv.ExpiresAt), CreatedAt: licentia.FormatTime(inv.CreatedAt),
		AcceptedAt: licentia.FormatTimePtr(inv.AcceptedAt), RevokedAt: licentia.FormatTimePtr(inv.RevokedAt)}
}

func memberOf(m *licentia.Member) memberJSON {
	return memberJSON{ID: m.ID, Email: m.Email, Role: m.Role, CreatedAt: licentia.FormatTime(m.CreatedAt)}
}

func (s *Server) invite(w http.ResponseWriter, r *http.Request) error {
	var in admin.NewInvitation
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	inv, err := s.admin.Invite(r.Context(), acting(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, invitationAnswer{Invitation: invitationOf(inv)})
	return nil
}

// teamPathID checks the caller's role before the path, so a role that
// cannot change the team hears so whatever it sends (403 comes before 400).
func (s *Server) teamPathID(r *http.Request) (string, error) {
	if err := s.admin.CanChangeTeam(r.Context(), acting(r)); err != nil {
		return "", err
	}
	return pathIDOnly(r)
}

func (s *Server) revokeInvitation(w http.ResponseWriter, r *http.Request) error {
	id, err := s.teamPathID(r)
	if err != nil {
		return err
	}
	inv, err := s.admin.RevokeInvitation(r.Context(), acting(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, invitationAnswer{Invitation: invitationOf(inv)})
	return nil
}

func (s *Server) changeMemberRole(w http.ResponseWriter, r *http.Request) error {
	var is licentia.Issues
	id := pathUUID(r, "id", &is)
	var in admin.ChangeRole
	if err := web.Decode(r, is, &in); err != nil {
		return err
	}
	m, err := s.admin.ChangeMemberRole(r.Context(), acting(r), id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"member": memberOf(m)})
	return nil
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request) error {
	id, err := s.teamPathID(r)
	if err != nil {
		return err
	}
	if err := s.admin.RemoveMember(r.Context(), acting(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

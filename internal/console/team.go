package console

import (
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// acting is the member as the team operations take them: they read the
// member's role again in their own transaction.
func (v *visit) acting() admin.Acting {
	return admin.Acting{OrgID: v.Member.OrgID, MemberID: v.Member.ID}
}

type teamPage struct {
	Members     []teamMember
	Invitations []licentia.Invitation
	Places      int64
	Used        int64
}

type teamMember struct {
	Member licentia.Member
	// Self is the signed-in member; Changeable says whether the member's
	// role allows changing this one, by the team rules.
	Self       bool
	Changeable bool
}

// team lists the members and pending invitations and, for roles with
// members:write, the forms that change the team.
func (s *Server) team(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.showTeam(w, r, v, nil)
}

func (s *Server) showTeam(w http.ResponseWriter, r *http.Request, v *visit, p *problem) error {
	ctx := r.Context()
	ms, err := s.admin.Members(ctx, v.orgID())
	if err != nil {
		return err
	}
	invs, err := s.admin.Invitations(ctx, v.orgID())
	if err != nil {
		return err
	}
	org, err := s.admin.Organization(ctx, v.orgID())
	if err != nil {
		return err
	}
	page := teamPage{Invitations: invs, Places: org.Limits.TeamPlaces, Used: org.TeamPlacesUsed}
	for _, m := range ms {
		self := m.ID == v.Member.ID
		page.Members = append(page.Members, teamMember{Member: m, Self: self,
			Changeable: licentia.CanChangeMember(v.Member.Role, m.Role, nil, self) == nil})
	}
	return s.render(w, r, http.StatusOK, "team", &view{Title: "Team", Section: "team", Visit: v, Notice: notice(r), Data: page, problem: p})
}

// invite invites an address with a role; the invitee gets a link by mail.
func (s *Server) invite(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.NewInvitation
	decodeForm(r.PostForm, &in)
	_, err := s.admin.Invite(r.Context(), v.acting(), in)
	if p := refusal("invite", r, err); p != nil {
		return s.showTeam(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/team", "invited")
}

func (s *Server) revokeInvitation(w http.ResponseWriter, r *http.Request, v *visit) error {
	_, err := s.admin.RevokeInvitation(r.Context(), v.acting(), r.PathValue("id"))
	if p := refusal("invitations", r, err); p != nil {
		return s.showTeam(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/team", "invitation-revoked")
}

func (s *Server) changeRole(w http.ResponseWriter, r *http.Request, v *visit) error {
	var in admin.ChangeRole
	decodeForm(r.PostForm, &in)
	_, err := s.admin.ChangeMemberRole(r.Context(), v.acting(), r.PathValue("id"), in)
	if p := refusal("members", r, err); p != nil {
		return s.showTeam(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/team", "role-changed")
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request, v *visit) error {
	err := s.admin.RemoveMember(r.Context(), v.acting(), r.PathValue("id"))
	if p := refusal("members", r, err); p != nil {
		return s.showTeam(w, r, v, p)
	}
	if err != nil {
		return err
	}
	return seeOther(w, r, "/console/team", "removed")
}

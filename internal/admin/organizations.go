package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// NewOrganization is what creates an organization and its owner.
type NewOrganization struct {
	Name       string
	Slug       string
	Plan       licentia.PlanID
	OwnerEmail string
}

// CreateOrganization creates an organization with its owner member.
func (s *Service) CreateOrganization(ctx context.Context, actor licentia.Actor, in NewOrganization) (*licentia.Organization, error) {
	if err := licentia.ValidateOrganization(in.Name, in.Slug, in.Plan, s.plans, in.OwnerEmail); err != nil {
		return nil, err
	}
	now := s.now()
	o := &licentia.Organization{ID: licentia.NewID(), Name: in.Name, Slug: in.Slug, Plan: in.Plan, CreatedAt: now}
	owner := &licentia.Member{ID: licentia.NewID(), OrgID: o.ID, Email: in.OwnerEmail, Role: licentia.RoleOwner, CreatedAt: now}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrganization(ctx, o); err != nil {
			return err
		}
		if err := tx.CreateMember(ctx, owner); err != nil {
			return err
		}
		base := licentia.AuditEntry{OrgID: o.ID, Actor: actor, At: now}
		e := base
		e.Action = licentia.AuditOrganizationCreated
		if err := events.Audit(ctx, tx, e, map[string]any{"organization_id": o.ID, "slug": o.Slug, "plan": o.Plan}); err != nil {
			return err
		}
		e = base
		e.Action = licentia.AuditMemberAdded
		return events.Audit(ctx, tx, e, map[string]any{"member_id": owner.ID, "role": owner.Role})
	})
	if err != nil {
		return nil, fmt.Errorf("create organization: %w", err)
	}
	return o, nil
}

// OrganizationBySlug finds an organization for the operator commands.
func (s *Service) OrganizationBySlug(ctx context.Context, slug string) (*licentia.Organization, error) {
	return s.store.OrganizationBySlug(ctx, slug)
}

// OrganizationView is an organization with its plan's limits and the team
// places in use.
type OrganizationView struct {
	Organization   *licentia.Organization
	Limits         licentia.Limits
	TeamPlacesUsed int64
}

// Organization reads the caller's organization.
func (s *Service) Organization(ctx context.Context, orgID string) (*OrganizationView, error) {
	o, err := s.store.Organization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	l, err := s.limits(o)
	if err != nil {
		return nil, err
	}
	used, err := teamPlacesUsed(ctx, s.store, orgID, s.now())
	if err != nil {
		return nil, err
	}
	return &OrganizationView{Organization: o, Limits: l, TeamPlacesUsed: used}, nil
}

// teamPlacesUsed counts members plus pending invitations.
func teamPlacesUsed(ctx context.Context, r store.Reader, orgID string, now time.Time) (int64, error) {
	members, err := r.Members(ctx, orgID)
	if err != nil {
		return 0, err
	}
	invs, err := r.PendingInvitations(ctx, orgID, now)
	if err != nil {
		return 0, err
	}
	return int64(len(members) + len(invs)), nil
}

// Members lists the team, oldest first.
func (s *Service) Members(ctx context.Context, orgID string) ([]licentia.Member, error) {
	return s.store.Members(ctx, orgID)
}

// Invitations lists the pending invitations.
func (s *Service) Invitations(ctx context.Context, orgID string) ([]licentia.Invitation, error) {
	return s.store.PendingInvitations(ctx, orgID, s.now())
}

package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// resource is something a plan limits, named as in the details of
// plan_limit_reached.
type resource string

const (
	resourceActiveLicences   resource = "active_licences"
	resourceProducts         resource = "products"
	resourceAPIKeys          resource = "api_keys"
	resourceWebhookEndpoints resource = "webhook_endpoints"
	resourceIntegrations     resource = "integrations"
	resourceTeamPlaces       resource = "team_places"
)

// planRule says how a plan limits one resource: the plan's limit, and how
// many places the organization uses at now.
type planRule struct {
	limit func(licentia.Limits) int64
	used  func(ctx context.Context, r store.Reader, orgID string, now time.Time) (int64, error)
}

// planRules holds what counts against each limit, one line a resource.
var planRules = map[resource]planRule{
	resourceActiveLicences:   {func(l licentia.Limits) int64 { return l.ActiveLicences }, countActiveLicences},
	resourceProducts:         {func(l licentia.Limits) int64 { return l.Products }, countProducts},
	resourceAPIKeys:          {func(l licentia.Limits) int64 { return l.APIKeys }, countAPIKeys},
	resourceWebhookEndpoints: {func(l licentia.Limits) int64 { return l.WebhookEndpoints }, countWebhookEndpoints},
	resourceIntegrations:     {func(l licentia.Limits) int64 { return l.Integrations }, countIntegrations},
	resourceTeamPlaces:       {func(l licentia.Limits) int64 { return l.TeamPlaces }, countTeamPlaces},
}

// countActiveLicences counts the licences derived active or trial, and the
// subscription licences whose subscription ended less than 30 days ago.
func countActiveLicences(ctx context.Context, r store.Reader, orgID string, now time.Time) (int64, error) {
	return r.PlanLicenceCount(ctx, orgID, now)
}

// countProducts counts every product: none is ever deleted.
func countProducts(ctx context.Context, r store.Reader, orgID string, now time.Time) (int64, error) {
	all, _, err := r.CountProducts(ctx, orgID, now)
	return all, err
}

// countAPIKeys counts the keys neither revoked nor expired.
func countAPIKeys(ctx context.Context, r store.Reader, orgID string, now time.Time) (int64, error) {
	return r.CountLiveAPIKeys(ctx, orgID, now)
}

// countWebhookEndpoints counts every endpoint, turned-off ones included.
func countWebhookEndpoints(ctx context.Context, r store.Reader, orgID string, _ time.Time) (int64, error) {
	eps, err := r.WebhookEndpoints(ctx, orgID)
	return int64(len(eps)), err
}

// countIntegrations counts the connected integrations; a disconnected one
// frees its place.
func countIntegrations(ctx context.Context, r store.Reader, orgID string, _ time.Time) (int64, error) {
	is, err := r.Integrations(ctx, orgID)
	return int64(len(is)), err
}

// countTeamPlaces counts the members and the pending invitations.
func countTeamPlaces(ctx context.Context, r store.Reader, orgID string, now time.Time) (int64, error) {
	return teamPlacesUsed(ctx, r, orgID, now)
}

// lockedOrg is an organization whose lock the transaction holds. Only
// lockOrganization makes one, so no plan check runs without the lock.
type lockedOrg struct{ id string }

// lockOrganization takes the organization's lock, which serialises its plan
// checks: of requests racing for the last place, across processes, exactly
// one wins. It is the first lock a transaction takes (docs/design.md, "Lock
// order"), so it comes before any other check reads or locks a row.
func lockOrganization(ctx context.Context, tx store.Tx, orgID string) (lockedOrg, error) {
	if err := tx.LockOrganization(ctx, orgID); err != nil {
		return lockedOrg{}, err
	}
	return lockedOrg{id: orgID}, nil
}

// checkPlan answers 402 plan_limit_reached, naming the plan, the resource,
// the limit and the count, when the organization already uses every place
// of r its plan allows at now.
func (s *Service) checkPlan(ctx context.Context, tx store.Tx, org lockedOrg, r resource, now time.Time) error {
	o, err := tx.Organization(ctx, org.id)
	if err != nil {
		return err
	}
	l, err := s.limits(o)
	if err != nil {
		return err
	}
	rule := planRules[r]
	n, err := rule.used(ctx, tx, org.id, now)
	if err != nil {
		return err
	}
	if limit := rule.limit(l); n >= limit {
		return licentia.PlanLimit(o.Plan, string(r), limit, n)
	}
	return nil
}

// Usage is one limit of the organization's plan and the places it uses.
type Usage struct {
	Resource string
	Limit    int64
	Used     int64
}

// PlanUsage reads how many places of each limit of its plan the
// organization uses now, in the order of the plan's limits.
func (s *Service) PlanUsage(ctx context.Context, orgID string) ([]Usage, error) {
	o, err := s.store.Organization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	l, err := s.limits(o)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var out []Usage
	for _, r := range []resource{resourceActiveLicences, resourceProducts, resourceAPIKeys, resourceIntegrations,
		resourceWebhookEndpoints, resourceTeamPlaces} {
		rule := planRules[r]
		n, err := rule.used(ctx, s.store, orgID, now)
		if err != nil {
			return nil, fmt.Errorf("plan usage: %w", err)
		}
		out = append(out, Usage{Resource: string(r), Limit: rule.limit(l), Used: n})
	}
	return out, nil
}

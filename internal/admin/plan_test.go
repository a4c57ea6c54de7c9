package admin_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// smallPlans hold a free plan allowing a few of everything, so that each
// limit is met in a few calls.
func smallPlans() licentia.Plans {
	return licentia.Plans{licentia.PlanFree: {ActiveLicences: 3, Products: 2, APIKeys: 2, Integrations: 1, WebhookEndpoints: 2, TeamPlaces: 1}}
}

// planResource is a resource a plan limits, with the operation that takes
// one place; the i-th call of take makes a new one. held is how many places
// serviceFixture already holds (its product).
type planResource struct {
	resource string
	limit    func(licentia.Limits) int64
	held     int64
	take     func(t *testing.T, svc *admin.Service, orgID string, i int) error
}

var planResources = []planResource{
	{"active_licences", func(l licentia.Limits) int64 { return l.ActiveLicences }, 0, func(t *testing.T, svc *admin.Service, orgID string, _ int) error {
		_, err := issue(t, svc, orgID)
		return err
	}},
	{"products", func(l licentia.Limits) int64 { return l.Products }, 1, func(t *testing.T, svc *admin.Service, orgID string, i int) error {
		id, name, prefix, major := fmt.Sprintf("app-%d", i), "App", "APP"+string(rune('A'+i%26))+string(rune('A'+i/26%26)), int64(1)
		_, err := svc.CreateProduct(t.Context(), licentia.OperatorActor, orgID, admin.NewProduct{ID: &id, Name: &name, KeyPrefix: &prefix, CurrentMajor: &major})
		return err
	}},
	{"api_keys", func(l licentia.Limits) int64 { return l.APIKeys }, 0, func(t *testing.T, svc *admin.Service, orgID string, _ int) error {
		_, _, err := svc.CreateAPIKey(t.Context(), licentia.OperatorActor, orgID, admin.NewAPIKey{Scopes: readScopes})
		return err
	}},
	{"webhook_endpoints", func(l licentia.Limits) int64 { return l.WebhookEndpoints }, 0, func(t *testing.T, svc *admin.Service, orgID string, i int) error {
		_, _, err := svc.AddWebhookEndpoint(t.Context(), licentia.OperatorActor, orgID,
			endpointInput(fmt.Sprintf("https://hooks.example.com/%d", i), licentia.EventLicenceIssued))
		return err
	}},
	{"integrations", func(l licentia.Limits) int64 { return l.Integrations }, 0, func(t *testing.T, svc *admin.Service, orgID string, i int) error {
		_, err := svc.ConnectIntegration(t.Context(), licentia.OperatorActor, orgID, shopConnection(fmt.Sprintf("Shop %d", i)))
		return err
	}},
}

// wantPlanLimit reports an error unless err is plan_limit_reached naming
// the free plan, resource, its limit and the count in use.
func wantPlanLimit(t *testing.T, what string, err error, resource string, limit int64) {
	t.Helper()
	e := wantCode(t, what, err, licentia.CodePlanLimitReached)
	if e == nil {
		return
	}
	want := map[string]any{"plan": "free", "resource": resource, "limit": limit, "count": limit}
	if diff := cmp.Diff(want, e.Details); diff != "" {
		t.Errorf("%s details mismatch (-want +got):\n%s", what, diff)
	}
}

// eachResource runs fn for each resource a plan limits, on each engine,
// once the organization of serviceFixture under smallPlans has taken all
// but free places of it through its operation.
func eachResource(t *testing.T, free int64, fn func(t *testing.T, svc *admin.Service, orgID string, r planResource, limit int64)) {
	limits := smallPlans()[licentia.PlanFree]
	for _, r := range planResources {
		t.Run(r.resource, func(t *testing.T) {
			engines(t, func(t *testing.T, st store.Store) {
				svc, o := serviceFixture(t, st, smallPlans(), licentia.PlanFree)
				limit := r.limit(limits)
				for i := range int(limit - r.held - free) {
					if err := r.take(t, svc, o.ID, i); err != nil {
						t.Fatalf("place %d of %d: error = %v", int64(i)+r.held+1, limit, err)
					}
				}
				fn(t, svc, o.ID, r, limit)
			})
		})
	}
}

// TestPlanLimitEachResource fills each resource a plan limits through its
// operation: every place up to the limit is taken, the next is refused
// with the plan, the resource, the limit and the count, and writes nothing.
func TestPlanLimitEachResource(t *testing.T) {
	eachResource(t, 0, func(t *testing.T, svc *admin.Service, orgID string, r planResource, limit int64) {
		for i := range 2 {
			wantPlanLimit(t, fmt.Sprintf("call %d past the limit", i+1), r.take(t, svc, orgID, int(limit)+i), r.resource, limit)
		}
	})
}

// TestPlanLimitReinstate: reinstating counts like an issue, with the same
// refusal, when the result would be active.
func TestPlanLimitReinstate(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		svc, o := serviceFixture(t, st, smallPlans(), licentia.PlanFree)
		limit := smallPlans()[licentia.PlanFree].ActiveLicences
		v, err := issue(t, svc, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.RevokeLicence(t.Context(), licentia.OperatorActor, o.ID, v.Licence.ID, admin.Reason("refund")); err != nil {
			t.Fatal(err)
		}
		for range limit {
			if _, err := issue(t, svc, o.ID); err != nil {
				t.Fatal(err)
			}
		}
		_, err = svc.ReinstateLicence(t.Context(), licentia.OperatorActor, o.ID, v.Licence.ID, admin.Reason("paid"))
		wantPlanLimit(t, "ReinstateLicence() on a full plan", err, "active_licences", limit)
		l, err := st.Licence(t.Context(), o.ID, v.Licence.ID)
		if err != nil || l.Status != licentia.StatusRevoked {
			t.Errorf("after a refused reinstate: licence status = %v, %v, want revoked", l.Status, err)
		}
	})
}

package console

import (
	"fmt"
	"net/http"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// chartDays is how many days the overview's chart shows, today last.
const chartDays = 30

type overviewPage struct {
	// Steps are the first steps, shown until every one is done.
	Steps  []firstStep
	Plan   string
	Usage  []usageRow
	Counts *store.LicenceCounts
	Chart  chart
	// Held counts the paid orders held until released or dropped, for
	// members who may see them.
	Held int64
}

type usageRow struct {
	Name        string
	Used, Limit int64
	// Percent is the share of the limit in use, 0 to 100, for the bar.
	Percent int64
}

// overview shows the plan's usage, the licence counts and what happened
// each day of the last month.
func (s *Server) overview(w http.ResponseWriter, r *http.Request, v *visit) error {
	ctx := r.Context()
	org, err := s.admin.Organization(ctx, v.orgID())
	if err != nil {
		return err
	}
	usage, err := s.admin.PlanUsage(ctx, v.orgID())
	if err != nil {
		return err
	}
	counts, _, err := s.admin.CountLicences(ctx, v.orgID(), admin.CountQuery{})
	if err != nil {
		return fmt.Errorf("overview: %w", err)
	}
	days, err := s.admin.Activity(ctx, v.orgID(), chartDays)
	if err != nil {
		return err
	}
	steps, err := s.firstSteps(ctx, v.orgID(), usage, counts)
	if err != nil {
		return err
	}
	p := overviewPage{Plan: string(org.Organization.Plan), Counts: counts, Chart: newChart(days)}
	if v.Member.Role.HasScope(licentia.ScopeProviderRead) {
		if p.Held, err = s.admin.CountHeldOrders(ctx, v.orgID()); err != nil {
			return err
		}
	}
	for _, st := range steps {
		if !st.Done {
			p.Steps = steps
			break
		}
	}
	for _, u := range usage {
		row := usageRow{Name: usageNames[u.Resource], Used: u.Used, Limit: u.Limit}
		if u.Limit > 0 {
			row.Percent = min(u.Used*100/u.Limit, 100)
		}
		p.Usage = append(p.Usage, row)
	}
	return s.render(w, r, http.StatusOK, "overview", &view{Title: "Overview", Section: "overview", Visit: v, Notice: notice(r), Data: p})
}

// usageNames are the plan's limits as the overview names them.
var usageNames = map[string]string{
	"active_licences": "Active licences", "products": "Products", "api_keys": "API keys",
	"integrations": "Payment integrations", "webhook_endpoints": "Webhook endpoints", "team_places": "Team places",
}

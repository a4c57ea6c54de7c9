package licentia

import (
	"encoding/json"
	"fmt"
	"io"
)

// PlanID names a plan. Plan ids are lower case.
type PlanID string

// The plans.
const (
	PlanFree     PlanID = "free"
	PlanIndie    PlanID = "indie"
	PlanStudio   PlanID = "studio"
	PlanBusiness PlanID = "business"
)

// Limits are what a plan allows.
type Limits struct {
	ActiveLicences   int64 `json:"active_licences"`
	Products         int64 `json:"products"`
	APIKeys          int64 `json:"api_keys"`
	Integrations     int64 `json:"integrations"`
	WebhookEndpoints int64 `json:"webhook_endpoints"`
	TeamPlaces       int64 `json:"team_places"`
}

// Plans maps each plan to its limits.
type Plans map[PlanID]Limits

// DefaultPlans are the plans used unless LICENTIA_PLANS_FILE overrides them.
func DefaultPlans() Plans {
	return Plans{
		PlanFree:     {ActiveLicences: 25, Products: 1, APIKeys: 2, Integrations: 1, WebhookEndpoints: 1, TeamPlaces: 1},
		PlanIndie:    {ActiveLicences: 1000, Products: 5, APIKeys: 10, Integrations: 2, WebhookEndpoints: 3, TeamPlaces: 3},
		PlanStudio:   {ActiveLicences: 25000, Products: 25, APIKeys: 25, Integrations: 5, WebhookEndpoints: 10, TeamPlaces: 10},
		PlanBusiness: {ActiveLicences: 1000000, Products: 100, APIKeys: 100, Integrations: 20, WebhookEndpoints: 25, TeamPlaces: 50},
	}
}

// Limits returns the limits of plan id.
func (p Plans) Limits(id PlanID) (Limits, error) {
	l, ok := p[id]
	if !ok {
		return Limits{}, fmt.Errorf("unknown plan %q", id)
	}
	return l, nil
}

// ReadPlans reads a plans file: a JSON object from plan id to limits. A plan
// the file names replaces the default wholly (every limit must be given);
// plans it does not name keep their defaults. The four plan ids are fixed.
func ReadPlans(r io.Reader) (Plans, error) {
	var raw map[string]map[string]json.RawMessage
	dec := json.NewDecoder(r)
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("read plans: %w", err)
	}
	plans := DefaultPlans()
	for id, fields := range raw {
		if _, ok := plans[PlanID(id)]; !ok {
			return nil, fmt.Errorf("read plans: unknown plan %q (plans are free, indie, studio, business)", id)
		}
		var l Limits
		for _, f := range []struct {
			name string
			dst  *int64
		}{
			{"active_licences", &l.ActiveLicences}, {"products", &l.Products}, {"api_keys", &l.APIKeys},
			{"integrations", &l.Integrations}, {"webhook_endpoints", &l.WebhookEndpoints}, {"team_places", &l.TeamPlaces},
		} {
			v, ok := fields[f.name]
			if !ok {
				return nil, fmt.Errorf("read plans: plan %q lacks %q", id, f.name)
			}
			// null would decode as 0 and silently allow nothing.
			if err := json.Unmarshal(v, f.dst); err != nil || string(v) == "null" || *f.dst < 0 {
				return nil, fmt.Errorf("read plans: plan %q: %q must be a non-negative integer", id, f.name)
			}
			delete(fields, f.name)
		}
		for name := range fields {
			return nil, fmt.Errorf("read plans: plan %q: unknown limit %q", id, name)
		}
		plans[PlanID(id)] = l
	}
	return plans, nil
}

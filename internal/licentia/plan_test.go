package licentia_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
)

// TestDefaultPlans holds the defaults to the plan table of decisions.md.
func TestDefaultPlans(t *testing.T) {
	want := licentia.Plans{
		"free":     {ActiveLicences: 25, Products: 1, APIKeys: 2, Integrations: 1, WebhookEndpoints: 1, TeamPlaces: 1},
		"indie":    {ActiveLicences: 1000, Products: 5, APIKeys: 10, Integrations: 2, WebhookEndpoints: 3, TeamPlaces: 3},
		"studio":   {ActiveLicences: 25000, Products: 25, APIKeys: 25, Integrations: 5, WebhookEndpoints: 10, TeamPlaces: 10},
		"business": {ActiveLicences: 1000000, Products: 100, APIKeys: 100, Integrations: 20, WebhookEndpoints: 25, TeamPlaces: 50},
	}
	if diff := cmp.Diff(want, licentia.DefaultPlans()); diff != "" {
		t.Errorf("DefaultPlans() mismatch (-want +got):\n%s", diff)
	}
	// Each call returns its own map, so an override cannot change the defaults.
	p := licentia.DefaultPlans()
	delete(p, licentia.PlanFree)
	if _, err := licentia.DefaultPlans().Limits(licentia.PlanFree); err != nil {
		t.Errorf("DefaultPlans() shares its map between calls: %v", err)
	}
}

func TestPlansLimits(t *testing.T) {
	p := licentia.DefaultPlans()
	if l, err := p.Limits(licentia.PlanIndie); err != nil || l.APIKeys != 10 {
		t.Errorf("Limits(indie) = %+v, %v, want 10 API keys", l, err)
	}
	if _, err := p.Limits("gold"); err == nil {
		t.Error("Limits(gold) error = nil, want an unknown plan")
	}
}

const studioOverride = `{"studio": {"active_licences": 50000, "products": 30, "api_keys": 40,
	"integrations": 6, "webhook_endpoints": 12, "team_places": 15}}`

func TestReadPlans(t *testing.T) {
	want := licentia.DefaultPlans()
	want[licentia.PlanStudio] = licentia.Limits{ActiveLicences: 50000, Products: 30, APIKeys: 40, Integrations: 6, WebhookEndpoints: 12, TeamPlaces: 15}
	got, err := licentia.ReadPlans(strings.NewReader(studioOverride))
	if err != nil {
		t.Fatalf("ReadPlans() error = %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadPlans() mismatch (-want +got):\n%s", diff)
	}

	got, err = licentia.ReadPlans(strings.NewReader(`{}`))
	if err != nil {
		t.Fatalf("ReadPlans({}) error = %v", err)
	}
	if diff := cmp.Diff(licentia.DefaultPlans(), got); diff != "" {
		t.Errorf("ReadPlans({}) mismatch (-want +got):\n%s", diff)
	}

	zero := `{"free": {"active_licences": 0, "products": 0, "api_keys": 0, "integrations": 0, "webhook_endpoints": 0, "team_places": 0}}`
	got, err = licentia.ReadPlans(strings.NewReader(zero))
	if err != nil {
		t.Fatalf("ReadPlans(zero limits) error = %v", err)
	}
	if diff := cmp.Diff(licentia.Limits{}, got[licentia.PlanFree]); diff != "" {
		t.Errorf("ReadPlans(zero limits) free mismatch (-want +got):\n%s", diff)
	}
}

func TestReadPlansRefuses(t *testing.T) {
	full := func(plan, replace, with string) string {
		s := `{"` + plan + `": {"active_licences": 1, "products": 2, "api_keys": 3, "integrations": 4, "webhook_endpoints": 5, "team_places": 6}}`
		return strings.Replace(s, replace, with, 1)
	}
	for _, tt := range []struct {
		name    string
		in      string
		mention string // the error names what is wrong
	}{
		{"unknown plan", full("enterprise", "", ""), `"enterprise"`},
		{"plan id in upper case", full("Free", "", ""), `"Free"`},
		{"missing limit", full("indie", `"api_keys": 3, `, ""), `"api_keys"`},
		{"negative", full("indie", `"products": 2`, `"products": -1`), `"products"`},
		{"fraction", full("indie", `"products": 2`, `"products": 2.5`), `"products"`},
		{"string", full("indie", `"products": 2`, `"products": "2"`), `"products"`},
		{"null limit", full("indie", `"products": 2`, `"products": null`), `"products"`},
		{"unknown limit name", full("indie", `"team_places": 6`, `"team_places": 6, "seats": 9`), `"seats"`},
		{"limit name in another case", full("indie", `"products"`, `"Products"`), `"products"`},
		{"plan not an object", `{"free": 3}`, "read plans"},
		{"not JSON", `free: 3`, "read plans"},
		{"empty file", ``, "read plans"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := licentia.ReadPlans(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("ReadPlans(%s) = %v, want an error", tt.in, got)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("ReadPlans(%s) error = %q, want it to mention %s", tt.in, err, tt.mention)
			}
		})
	}
}

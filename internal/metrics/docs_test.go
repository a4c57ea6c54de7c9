package metrics_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/metrics"
)

// serviceMetrics are the names of the service's own metrics, as a scrape
// lists them once each has a series.
func serviceMetrics(t *testing.T) []string {
	t.Helper()
	m := metrics.New(metrics.Options{PendingDeliveries: func(context.Context) (int64, error) { return 0, nil },
		LeasesInUse: func(context.Context) (int64, error) { return 0, nil }})
	m.Request("api", "", "GET", 200, 0)
	m.Activation(metrics.RouteStatus, metrics.ResultOK)
	m.ProviderEvent("stripe", metrics.ProviderApplied)
	m.RateLimited("admin")
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "licentia_") {
			names = append(names, f.GetName())
		}
	}
	if len(names) != 10 {
		t.Fatalf("service metrics = %v, want 10", names)
	}
	return names
}

// TestMetricsDocumented: docs/metrics.md describes every metric of the
// service under a heading of its own.
func TestMetricsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range serviceMetrics(t) {
		if !strings.Contains(string(doc), "### `"+name+"`") {
			t.Errorf("docs/metrics.md has no section for %s", name)
		}
	}
}

// TestGrafanaDashboard: docs/grafana-dashboard.json is JSON Grafana
// imports, choosing its Prometheus data source in a variable, and some
// panel queries every metric of the service.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("../../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title      string
		UID        string
		Templating struct {
			List []struct{ Name, Type, Query any }
		}
		Panels []struct {
			Type, Title string
			Datasource  struct{ Type, UID string }
			Targets     []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("docs/grafana-dashboard.json: %v", err)
	}
	if d.Title == "" || d.UID == "" {
		t.Errorf("dashboard title %q, uid %q: want both", d.Title, d.UID)
	}
	hasSource := false
	for _, v := range d.Templating.List {
		if v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus" {
			hasSource = true
		}
	}
	if !hasSource {
		t.Error("dashboard has no Prometheus data source variable named datasource")
	}
	var exprs []string
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: data source %q, %d queries; want ${datasource} and a query", p.Title, p.Datasource.UID, len(p.Targets))
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	all := strings.Join(exprs, "\n")
	for _, name := range append(serviceMetrics(t), "go_goroutines", "process_resident_memory_bytes") {
		if !strings.Contains(all, name) {
			t.Errorf("no dashboard panel queries %s", name)
		}
	}
}

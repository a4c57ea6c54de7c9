package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// TestMetricsCounted: with metrics on, each activation route's answer is
// counted by route and result, a 413 and a 429 decided before the handler
// included; each 429 is counted under its rule (public, admin, lookup);
// and every request by pattern, method and status.
func TestMetricsCounted(t *testing.T) {
	e, key := newDeskEnv(t, envOptions{metrics: true})
	serve(t, e, "/v1/activations", mustJSON(t, activateBody(key, "metrics-machine", nil)), http.StatusCreated)
	status := mustJSON(t, map[string]any{"licence_key": key, "machine_id": "metrics-machine"})
	for range 28 {
		serve(t, e, "/v1/activations/status", status, http.StatusOK)
	}
	serve(t, e, "/v1/activations/status", mustJSON(t, map[string]any{"licence_key": "DESK_NOTAKEY", "machine_id": "metrics-machine"}),
		http.StatusUnprocessableEntity)
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/activations/status", bytes.NewReader(make([]byte, web.MaxBody+1)))
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("POST /v1/activations/status of %d bytes = %d, want 413", web.MaxBody+1, w.Code)
	}
	serve(t, e, "/v1/activations/status", status, http.StatusTooManyRequests)
	serve(t, e, "/v1/activations/deactivate", status, http.StatusOK)

	org := call{method: "GET", path: "/v1/admin/organization", key: e.key(t, e.org.ID, licentia.ScopeOrganizationRead)}
	e.repeat(t, 300, org, http.StatusOK)
	e.repeat(t, 1, org, http.StatusTooManyRequests)
	lookup := call{method: "GET", path: "/v1/purchases/lookup?email=ada%40example.com&order_id=cs_1"}
	e.repeat(t, 5, lookup, http.StatusNotFound)
	e.repeat(t, 1, lookup, http.StatusTooManyRequests)

	want := `
# HELP licentia_activations_total Answers of the activation routes, by route (activate, activate_offline, status, deactivate, lease, lease_renew, lease_release) and result (ok or the error code).
# TYPE licentia_activations_total counter
licentia_activations_total{result="licence_key_invalid",route="status"} 1
licentia_activations_total{result="ok",route="activate"} 1
licentia_activations_total{result="ok",route="deactivate"} 1
licentia_activations_total{result="ok",route="status"} 28
licentia_activations_total{result="payload_too_large",route="status"} 1
licentia_activations_total{result="rate_limited",route="status"} 1
# HELP licentia_rate_limited_total Requests refused 429 by a rate limit, by rule.
# TYPE licentia_rate_limited_total counter
licentia_rate_limited_total{rule="admin"} 1
licentia_rate_limited_total{rule="lookup"} 1
licentia_rate_limited_total{rule="public"} 1
`
	if err := testutil.GatherAndCompare(e.metrics.Gatherer(), strings.NewReader(want),
		"licentia_activations_total", "licentia_rate_limited_total"); err != nil {
		t.Error(err)
	}
	for _, tt := range []struct {
		labels []string // pattern, method, status
		want   float64
	}{
		{[]string{"POST /v1/activations/status", "POST", "200"}, 28},
		{[]string{"POST /v1/activations/status", "POST", "422"}, 1},
		{[]string{"POST /v1/activations/status", "POST", "413"}, 1},
		{[]string{"POST /v1/activations/status", "POST", "429"}, 1},
		{[]string{"GET /v1/admin/organization", "GET", "200"}, 300},
		{[]string{"GET /v1/admin/organization", "GET", "429"}, 1},
		{[]string{"GET /v1/purchases/lookup", "GET", "429"}, 1},
	} {
		line := `licentia_http_requests_total{method="` + tt.labels[1] + `",pattern="` + tt.labels[0] + `",server="api",status="` + tt.labels[2] + `"}`
		if got := counterValue(t, e, line); got != tt.want {
			t.Errorf("%s = %v, want %v", line, got, tt.want)
		}
	}
}

// counterValue reads the value of one series line of the env's metrics.
func counterValue(t *testing.T, e *testEnv, series string) float64 {
	t.Helper()
	w := httptest.NewRecorder()
	e.metrics.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for _, l := range strings.Split(w.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return f
		}
	}
	return 0
}

package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestConsoleMetrics: the console's requests are counted under server
// "console" by route pattern, and its 429s under the rule that refused
// them: lookup for the customer page, sign_in for a client past its failed
// sign-ins.
func TestConsoleMetrics(t *testing.T) {
	e := newEnv(t, envOptions{proxies: loopbackProxy})
	c := e.buyer("198.51.100.30")
	lookup := url.Values{"email": {"a@example.com"}, "order_id": {"o"}}
	for range 5 {
		wantStatus(t, "lookup", c.post(t, "/console/purchase", lookup), http.StatusNotFound)
	}
	wantStatus(t, "sixth lookup", c.post(t, "/console/purchase", lookup), http.StatusTooManyRequests)
	const guesser = "198.51.100.7"
	for i := range 30 {
		_, a := e.signInFrom(t, guesser, fmt.Sprintf("someone%d@acme.example", i), "wrong password")
		wantStatus(t, "failed sign-in", a, http.StatusUnauthorized)
	}
	_, a := e.signInFrom(t, guesser, "someone@acme.example", "wrong password")
	wantStatus(t, "sign-in past the limit", a, http.StatusTooManyRequests)

	want := `
# HELP licentia_rate_limited_total Requests refused 429 by a rate limit, by rule.
# TYPE licentia_rate_limited_total counter
licentia_rate_limited_total{rule="lookup"} 1
licentia_rate_limited_total{rule="sign_in"} 1
`
	if err := testutil.GatherAndCompare(e.metrics.Gatherer(), strings.NewReader(want), "licentia_rate_limited_total"); err != nil {
		t.Error(err)
	}
	want = `
# HELP licentia_http_requests_total HTTP requests answered, by server (api, console, oauth, mcp), route pattern ("" for none), method and status.
# TYPE licentia_http_requests_total counter
licentia_http_requests_total{method="POST",pattern="POST /console/purchase",server="console",status="404"} 5
licentia_http_requests_total{method="POST",pattern="POST /console/purchase",server="console",status="429"} 1
licentia_http_requests_total{method="POST",pattern="POST /console/sign-in",server="console",status="401"} 30
licentia_http_requests_total{method="POST",pattern="POST /console/sign-in",server="console",status="429"} 1
`
	if err := testutil.GatherAndCompare(e.metrics.Gatherer(), strings.NewReader(want), "licentia_http_requests_total"); err != nil {
		t.Error(err)
	}
}

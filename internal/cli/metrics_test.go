package cli_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/cli"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/storetest"
)

// metricsService is a running service with LICENTIA_METRICS_LISTEN on a
// free loopback port, a Stripe integration in acme, and in org big a
// product, an API key and two webhook endpoints for licence.issued: one
// on a receiver that answers 204, one on an address that refuses
// connections.
type metricsService struct {
	h        *harness
	app      *cli.App
	base     string
	key      string // big's API key
	orgID    string // big
	integ    string // acme's Stripe integration
	shop     *providertest.Stripe
	received *atomic.Int64
}

func newMetricsService(t *testing.T, engine string) *metricsService {
	t.Helper()
	dbURL := ""
	if engine == "postgres" {
		dbURL = storetest.PostgresURL(t)
	}
	h, shop, keyFile, secretFile := integrationHarnessOn(t, dbURL)
	var received atomic.Int64
	receiver := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	writeFile(t, ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: receiver.Certificate().Raw}))
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := closed.Addr().String()
	closed.Close()
	// httptest's certificate names example.com.
	h.vars["LICENTIA_WEBHOOK_RESOLVE"] = "example.com:443:" + receiver.Listener.Addr().String() + ",down.example.com:443:" + down
	h.vars["LICENTIA_WEBHOOK_CA_FILE"] = ca
	h.vars["LICENTIA_METRICS_LISTEN"] = "127.0.0.1:0"

	integ := h.ok(t, "integration", "connect", "--org", "acme", "--provider", "stripe", "--name", "Shop",
		"--api-key-file", keyFile, "--webhook-secret-file", secretFile)["id"].(string)
	orgID := h.org(t, "big", "business")["id"].(string)
	key := h.ok(t, "apikey", "create", "--org", "big", "--scopes", "products:write,licences:read,licences:write")["key"].(string)
	st, err := openServiceStore(t, h)
	if err != nil {
		t.Fatal(err)
	}
	svc := adminService(st, masterKey(t, rawKey(1)))
	for _, u := range []string{"https://example.com/licentia", "https://down.example.com/licentia"} {
		if _, _, err := svc.AddWebhookEndpoint(t.Context(), licentia.OperatorActor, orgID,
			admin.CreateWebhookEndpoint{URL: &u, EventTypes: []licentia.EventType{licentia.EventLicenceIssued}}); err != nil {
			t.Fatalf("AddWebhookEndpoint(%s) error = %v", u, err)
		}
	}
	app, base := h.serve(t, io.Discard)
	if app.MetricsAddr() == "" || app.MetricsAddr() == app.Addr() {
		t.Fatalf("MetricsAddr() = %q, want an address of its own (API on %s)", app.MetricsAddr(), app.Addr())
	}
	createHTTP(t, base, key, "desk-app", "DESK")
	return &metricsService{h: h, app: app, base: base, key: key, orgID: orgID, integ: integ, shop: shop, received: &received}
}

// openServiceStore opens the harness's database, on either engine.
func openServiceStore(t *testing.T, h *harness) (store.Store, error) {
	t.Helper()
	u := h.vars["LICENTIA_DATABASE_URL"]
	if !strings.HasPrefix(u, "postgres") {
		return h.openStore(t), nil
	}
	st, err := postgres.Open(t.Context(), u)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { st.Close() })
	return st, nil
}

// scrape reads the service's metrics.
func (m *metricsService) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + m.app.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics error = %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d, want 200", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: not the text format: %v", err)
	}
	return fams
}

// value is the sample of name whose labels are exactly labels: a counter's
// or a gauge's value, a histogram's count. found is false when there is
// none.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (v float64, found bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if want, ok := labels[l.GetName()]; !ok || want != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// activation is the body of an activation of machine under key.
func activation(key, machine string) string {
	return fmt.Sprintf(`{"licence_key":%q,"machine_id":%q,"label":"Ada's laptop","os":"linux","app_version":"3.1.0"}`, key, machine)
}

// send makes a request and returns its status and error code, if any.
func send(t *testing.T, method, url, key, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s error = %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	code := ""
	if m := regexp.MustCompile(`"code":"([a-z_]+)"`).FindSubmatch(raw); m != nil {
		code = string(m[1])
	}
	return resp.StatusCode, code
}

// TestServeMetrics scrapes the metrics listener of a running service after
// real requests and checks each series: requests by server, pattern,
// method and status with their latency, activations by route and result,
// a 429 of the public limit and of the console's sign-in limit, provider
// events by outcome, webhook deliveries delivered and retrying, and the
// queue's depth read from the database. The Go runtime and process
// collectors are there too.
func TestServeMetrics(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) { testServeMetrics(t, engine) })
	}
}

func testServeMetrics(t *testing.T, engine string) {
	m := newMetricsService(t, engine)
	licence := issueHTTP(t, m.base, m.key, "desk-app")
	const jsonType = "application/json"

	if status, code := send(t, "POST", m.base+"/v1/activations", "", jsonType,
		activation(licence.key, "metrics-machine")); status != http.StatusCreated {
		t.Fatalf("POST /v1/activations = %d %s, want 201", status, code)
	}
	// A key that is no licence key, then status checks until the public
	// limit (30 a minute per address and route) refuses one. Counting up
	// to the 429 keeps the test right when the minute's window turns
	// meanwhile.
	_, badCode := send(t, "POST", m.base+"/v1/activations/status", "", jsonType, `{"licence_key":"DESK_NOTAKEY","machine_id":"metrics-machine"}`)
	if badCode == "" {
		t.Fatal("POST /v1/activations/status with a wrong key answered no error code")
	}
	oks := 0
	for range 100 {
		status, code := send(t, "POST", m.base+"/v1/activations/status", "", jsonType,
			fmt.Sprintf(`{"licence_key":%q,"machine_id":"metrics-machine"}`, licence.key))
		if status == http.StatusTooManyRequests {
			break
		}
		if status != http.StatusOK {
			t.Fatalf("POST /v1/activations/status = %d %s, want 200 until 429", status, code)
		}
		oks++
	}
	// Failed sign-ins until the console's limit per address refuses one.
	signIns := 0
	for range 100 {
		resp, err := http.PostForm(m.base+"/console/sign-in", url.Values{"email": {"ada@example.com"}, "password": {"wrong"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			break
		}
		signIns++
	}
	if status, _ := send(t, "GET", m.base+"/console/sign-in", "", "", ""); status != http.StatusOK {
		t.Errorf("GET /console/sign-in = %d, want 200", status)
	}

	m.shop.AddCheckout("cs_metrics_1", providers.Item{ProductID: "prod_unmapped", Quantity: 1})
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_metrics_1", SessionID: "cs_metrics_1",
		PaymentIntent: "pi_metrics_1", Customer: "cus_metrics_1", Email: "buyer@example.com"}, time.Now())
	for _, tt := range []struct {
		integ, secret string
		want          int
	}{
		{m.integ, cliShopSecret, http.StatusOK},                  // applied (no product mapped: nothing to issue)
		{m.integ, cliShopSecret, http.StatusOK},                  // repeated
		{m.integ, "whsec_wrong", http.StatusBadRequest},          // refused: stripe
		{licentia.NewID(), cliShopSecret, http.StatusBadRequest}, // refused: no such integration
	} {
		if status, code := postStripe(t, m.base, tt.integ, tt.secret, body); status != tt.want {
			t.Errorf("provider webhook = %d %s, want %d", status, code, tt.want)
		}
	}

	// One delivery succeeds, the other fails and waits for its retry.
	poll(t, "the receiver gets the event", func() bool { return m.received.Load() == 1 })
	var fams map[string]*dto.MetricFamily
	poll(t, "both attempts are recorded", func() bool {
		fams = m.scrape(t)
		delivered, _ := value(fams, "licentia_webhook_deliveries_total", map[string]string{"outcome": "delivered"})
		retrying, _ := value(fams, "licentia_webhook_deliveries_total", map[string]string{"outcome": "retrying"})
		return delivered == 1 && retrying >= 1
	})

	api := func(pattern, method, status string) map[string]string {
		return map[string]string{"server": "api", "pattern": pattern, "method": method, "status": status}
	}
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"licentia_http_requests_total", api("POST /v1/activations", "POST", "201"), 1},
		{"licentia_http_requests_total", api("POST /v1/activations/status", "POST", "200"), float64(oks)},
		{"licentia_http_requests_total", api("POST /v1/activations/status", "POST", "429"), 1},
		{"licentia_http_requests_total", api("POST /v1/admin/licences", "POST", "201"), 1},
		{"licentia_http_requests_total", api("POST /v1/admin/products", "POST", "201"), 1},
		{"licentia_http_requests_total", api("POST /v1/providers/{integration_id}/webhooks", "POST", "200"), 2},
		{"licentia_http_requests_total", api("POST /v1/providers/{integration_id}/webhooks", "POST", "400"), 2},
		{"licentia_http_requests_total", map[string]string{"server": "console", "pattern": "GET /console/sign-in", "method": "GET", "status": "200"}, 1},
		{"licentia_http_requests_total", map[string]string{"server": "console", "pattern": "POST /console/sign-in", "method": "POST", "status": "429"}, 1},
		{"licentia_http_request_duration_seconds", map[string]string{"server": "api", "pattern": "POST /v1/activations/status"}, float64(oks + 2)},
		{"licentia_http_request_duration_seconds", map[string]string{"server": "console", "pattern": "POST /console/sign-in"}, float64(signIns + 1)},
		{"licentia_activations_total", map[string]string{"route": "activate", "result": "ok"}, 1},
		{"licentia_activations_total", map[string]string{"route": "status", "result": "ok"}, float64(oks)},
		{"licentia_activations_total", map[string]string{"route": "status", "result": badCode}, 1},
		{"licentia_activations_total", map[string]string{"route": "status", "result": "rate_limited"}, 1},
		{"licentia_rate_limited_total", map[string]string{"rule": "public"}, 1},
		{"licentia_rate_limited_total", map[string]string{"rule": "sign_in_email"}, 1},
		{"licentia_provider_events_total", map[string]string{"provider": "stripe", "outcome": "applied"}, 1},
		{"licentia_provider_events_total", map[string]string{"provider": "stripe", "outcome": "repeated"}, 1},
		{"licentia_provider_events_total", map[string]string{"provider": "stripe", "outcome": "refused"}, 1},
		{"licentia_provider_events_total", map[string]string{"provider": "unknown", "outcome": "refused"}, 1},
		{"licentia_webhook_deliveries_total", map[string]string{"outcome": "delivered"}, 1},
		{"licentia_webhook_deliveries_total", map[string]string{"outcome": "given_up"}, 0},
		// The failed delivery stays pending until its retry.
		{"licentia_webhook_queue_depth", map[string]string{}, 1},
	} {
		if got, ok := value(fams, tt.name, tt.labels); !ok || got != tt.want {
			t.Errorf("%s%v = %v (found %t), want %v", tt.name, tt.labels, got, ok, tt.want)
		}
	}
	if signIns < 10 {
		t.Errorf("the sign-in limit refused after %d failures, want at least 10", signIns)
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("metrics lack %s", name)
		}
	}
	if got := fams["licentia_activations_total"].GetMetric(); len(got) != 4 {
		t.Errorf("licentia_activations_total has %d series, want 4 (activate ok; status ok, %s, rate_limited)", len(got), badCode)
	}
}

// TestServeMetricsListener: the metrics listener answers GET /metrics and
// nothing else, every answer of it carries X-Content-Type-Options:
// nosniff, the API's address does not serve them, and the listener stops
// with the service.
func TestServeMetricsListener(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_METRICS_LISTEN"] = "127.0.0.1:0"
	app, base := h.serve(t, io.Discard)
	metrics := "http://" + app.MetricsAddr()
	for _, tt := range []struct {
		method, url string
		want        int
	}{
		{"GET", metrics + "/metrics", http.StatusOK},
		{"POST", metrics + "/metrics", http.StatusMethodNotAllowed},
		{"GET", metrics + "/", http.StatusNotFound},
		{"GET", metrics + "/debug/pprof/", http.StatusNotFound},
		{"GET", base + "/metrics", http.StatusNotFound},
	} {
		if status, _ := send(t, tt.method, tt.url, "", "", ""); status != tt.want {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.url, status, tt.want)
		}
		if !strings.HasPrefix(tt.url, metrics) {
			continue
		}
		if got := answerHeader(t, tt.method, tt.url).Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s: X-Content-Type-Options = %q, want nosniff", tt.method, tt.url, got)
		}
	}
	// Without the setting there is no listener and nothing is counted.
	h2 := newHarness(t)
	app2, _ := h2.serve(t, io.Discard)
	if app2.MetricsAddr() != "" {
		t.Errorf("MetricsAddr() without LICENTIA_METRICS_LISTEN = %q, want none", app2.MetricsAddr())
	}
}

// answerHeader sends an empty request and returns the answer's header.
func answerHeader(t *testing.T, method, url string) http.Header {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s error = %v", method, url, err)
	}
	resp.Body.Close()
	return resp.Header
}

// TestServeMetricsStops: the metrics listener closes when Run returns.
func TestServeMetricsStops(t *testing.T) {
	h := newHarness(t)
	h.vars["LICENTIA_LISTEN"] = "127.0.0.1:0"
	h.vars["LICENTIA_METRICS_LISTEN"] = "127.0.0.1:0"
	app, err := cli.NewApp(t.Context(), h.env(io.Discard, io.Discard))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	t.Cleanup(func() { app.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	poll(t, "the metrics answer", func() bool {
		resp, err := http.Get("http://" + app.MetricsAddr() + "/metrics")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run() error = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run() did not return")
	}
	if c, err := net.DialTimeout("tcp", app.MetricsAddr(), time.Second); err == nil {
		c.Close()
		t.Error("the metrics listener still accepts connections after Run returned")
	}
}

// Label values that would identify a customer, a licence or a key.
var (
	emailRE      = regexp.MustCompile(`@`)
	uuidRE       = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	licenceKeyRE = regexp.MustCompile(`[A-Z2-9]{2,8}_|[0-9A-Z]{5}-[0-9A-Z]{5}`)
	apiKeyRE     = regexp.MustCompile(`licentia_[a-z0-9]{12}`)
)

// TestMetricsLabelsHoldNoIdentifiers sends requests full of ids, keys and
// addresses, in paths, queries, bodies and headers, then reads every
// label value of every series and fails if one holds an email address, a
// UUID, a licence key or an API key, or any of the values sent.
func TestMetricsLabelsHoldNoIdentifiers(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) { testMetricsLabelsHoldNoIdentifiers(t, engine) })
	}
}

func testMetricsLabelsHoldNoIdentifiers(t *testing.T, engine string) {
	m := newMetricsService(t, engine)
	licence := issueHTTP(t, m.base, m.key, "desk-app")
	const jsonType = "application/json"
	sent := []string{licence.id, licence.key, m.key, m.orgID, m.integ, "customer@example.com", "ada@example.com", "mallory@example.com"}
	for _, r := range []struct{ method, path, key, body string }{
		{"GET", "/v1/admin/licences/" + licence.id, m.key, ""},
		{"GET", "/v1/admin/licences/" + licentia.NewID(), m.key, ""},
		{"GET", "/v1/admin/licences?email=customer%40example.com", m.key, ""},
		{"GET", "/v1/admin/licences/" + licence.id + "/audit", "licentia_abcdefghijkl_wrong", ""},
		{"POST", "/v1/activations", "", activation(licence.key, "mallory@example.com")},
		{"POST", "/v1/activations/status", "", fmt.Sprintf(`{"licence_key":%q,"machine_id":%q}`, licence.key, licence.id)},
		{"POST", "/v1/activations/deactivate", "", fmt.Sprintf(`{"licence_key":%q,"machine_id":"mallory@example.com"}`, licence.key)},
		{"GET", "/v1/purchases/lookup?order_id=" + licence.id + "&email=customer%40example.com", "", ""},
		{"GET", "/v1/nothing/" + licence.key + "/customer@example.com", m.key, ""},
		{"FROB-" + strings.ToUpper(licence.id), "/v1/admin/licences/" + licence.id, m.key, ""},
		{"GET", "/console/licences/" + licence.id, "", ""},
		{"GET", "/console/nothing/customer@example.com", "", ""},
		{"POST", "/v1/providers/" + m.integ + "/webhooks", "", `{"id":"evt_1","data":{"object":{"customer_email":"customer@example.com"}}}`},
	} {
		send(t, r.method, m.base+r.path, r.key, jsonType, r.body)
	}
	resp, err := http.PostForm(m.base+"/console/sign-in", url.Values{"email": {"ada@example.com"}, "password": {"wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := postStripeSigned(t, m, licence); err != nil {
		t.Fatal(err)
	}

	fams := m.scrape(t)
	if fams["licentia_http_requests_total"] == nil {
		t.Fatal("no licentia_http_requests_total series")
	}
	values := 0
	for name, f := range fams {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				values++
				v := l.GetValue()
				for re, what := range map[*regexp.Regexp]string{emailRE: "an email address", uuidRE: "a UUID", licenceKeyRE: "a licence key", apiKeyRE: "an API key"} {
					if re.MatchString(v) {
						t.Errorf("%s{%s=%q} holds %s", name, l.GetName(), v, what)
					}
				}
				for _, x := range sent {
					if strings.Contains(strings.ToLower(v), strings.ToLower(x)) {
						t.Errorf("%s{%s=%q} holds a value sent (%s...)", name, l.GetName(), v, x[:4])
					}
				}
			}
		}
	}
	if got, _ := value(fams, "licentia_http_requests_total",
		map[string]string{"server": "api", "pattern": "", "method": "GET", "status": "404"}); got != 1 {
		t.Errorf("requests to no route = %v, want 1 under the pattern \"\"", got)
	}
	if got, _ := value(fams, "licentia_http_requests_total",
		map[string]string{"server": "api", "pattern": "", "method": "other", "status": "405"}); got != 1 {
		t.Errorf("requests with an unknown method = %v, want 1 under the method other", got)
	}
	t.Logf("%d label values checked", values)
}

// postStripeSigned sends a correctly signed Stripe event carrying the
// licence's id and a customer's address.
func postStripeSigned(t *testing.T, m *metricsService, l issued) error {
	t.Helper()
	m.shop.AddCheckout("cs_"+l.id, providers.Item{ProductID: "prod_unmapped", Quantity: 1})
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_" + l.id, SessionID: "cs_" + l.id,
		PaymentIntent: "pi_1", Customer: "cus_1", Email: "customer@example.com"}, time.Now())
	if status, code := postStripe(t, m.base, m.integ, cliShopSecret, body); status != http.StatusOK {
		return fmt.Errorf("signed Stripe event = %d %s, want 200", status, code)
	}
	return nil
}

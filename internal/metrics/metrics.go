// Package metrics holds the service's Prometheus metrics: a registry of its
// own (never the global one, so no library can add series to it unseen)
// with the Go runtime and process collectors and the service's counters,
// served on LICENTIA_METRICS_LISTEN. Every label takes its values from a
// small fixed set, a route pattern, a status, a contract code or a rule
// name, never an id, a key, an email address, a path or a query: those
// would make a series per customer and carry personal data into the
// monitoring system.
//
// A nil *Metrics records nothing, so callers never check whether metrics
// are on.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// QueueReadTimeout bounds the read of the webhook queue's depth on each
// scrape: a slow database must not hold the scrape, and the depth is left
// out of that scrape instead.
const QueueReadTimeout = 2 * time.Second

// Options are the dependencies of Metrics.
type Options struct {
	// PendingDeliveries counts the webhook deliveries waiting to be sent,
	// read on each scrape; nil leaves the queue depth out.
	PendingDeliveries func(context.Context) (int64, error)
	// LeasesInUse counts the leases of floating use in use, read on each
	// scrape; nil leaves the gauge out.
	LeasesInUse func(context.Context) (int64, error)
	Logger      *slog.Logger
}

// Metrics records what the service does.
type Metrics struct {
	registry       *prometheus.Registry
	log            *slog.Logger
	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	activations    *prometheus.CounterVec
	deliveries     *prometheus.CounterVec
	providerEvents *prometheus.CounterVec
	rateLimited    *prometheus.CounterVec
	fallback       prometheus.Gauge
	fallbackCounts prometheus.Counter
}

// latencyBuckets, in seconds, are finer under 10 ms than Prometheus's
// defaults: a status check takes well under a millisecond, and the
// targets are a p99 of 5 ms for status checks and 10 ms for writes.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// New returns Metrics with a registry of their own.
func New(o Options) *Metrics {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		log:      o.Logger,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "licentia_http_requests_total",
			Help: "HTTP requests answered, by server (api, console, oauth, mcp), route pattern (\"\" for none), method and status.",
		}, []string{"server", "pattern", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "licentia_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by server and route pattern.",
			Buckets: latencyBuckets,
		}, []string{"server", "pattern"}),
		activations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "licentia_activations_total",
			Help: "Answers of the activation routes, by route (activate, activate_offline, status, deactivate, lease, lease_renew, lease_release) and result (ok or the error code).",
		}, []string{"route", "result"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "licentia_webhook_deliveries_total",
			Help: "Webhook delivery attempts recorded, by outcome: delivered, retrying (failed, tried again later) or given_up.",
		}, []string{"outcome"}),
		providerEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "licentia_provider_events_total",
			Help: "Payment provider webhook events received, by provider and outcome: applied, held, repeated, ignored, refused or failed.",
		}, []string{"provider", "outcome"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "licentia_rate_limited_total",
			Help: "Requests refused 429 by a rate limit, by rule.",
		}, []string{"rule"}),
		fallback: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "licentia_rate_limiter_fallback",
			Help: "1 while the shared rate limiter (Redis) is unreachable and this process counts the limits on its own, else 0.",
		}),
		fallbackCounts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "licentia_rate_limiter_fallback_requests_total",
			Help: "Requests counted by this process alone because the shared rate limiter (Redis) was unreachable.",
		}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration, m.activations, m.deliveries, m.providerEvents, m.rateLimited,
		m.fallback, m.fallbackCounts,
	)
	if o.PendingDeliveries != nil {
		m.registry.MustRegister(newQueueDepth(o.PendingDeliveries, o.Logger))
	}
	if o.LeasesInUse != nil {
		m.registry.MustRegister(newLeasesInUse(o.LeasesInUse, o.Logger))
	}
	// Every outcome is a series from the start, so that a rate over it is
	// 0 rather than missing until the first delivery.
	for _, o := range []string{DeliveryDelivered, DeliveryRetrying, DeliveryGivenUp} {
		m.deliveries.WithLabelValues(o)
	}
	return m
}

// Handler serves the registry in the Prometheus text format. A nil
// Metrics serves 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
		// Each scrape reads the database once; a pile of them must not.
		MaxRequestsInFlight: 2,
	})
}

// Gatherer is the registry, for tests that read every series.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.registry }

// Request records one answered HTTP request of server ("api",
// "console", "oauth" or "mcp"). pattern is the route pattern the request matched, "" for
// none; status is what was sent, 0 when the handler wrote nothing (net/http
// then sends 200).
func (m *Metrics) Request(server, pattern, method string, status int, took time.Duration) {
	if m == nil {
		return
	}
	if status == 0 {
		status = http.StatusOK
	}
	m.requests.WithLabelValues(server, pattern, methodLabel(method), statusLabel(status)).Inc()
	m.duration.WithLabelValues(server, pattern).Observe(took.Seconds())
}

// Activation records the answer of an activation route (route is
// RouteActivate, RouteActivateOffline, RouteStatus or RouteDeactivate): result is "ok", or the
// contract code the route answered.
func (m *Metrics) Activation(route, result string) {
	if m == nil {
		return
	}
	m.activations.WithLabelValues(route, result).Inc()
}

// Delivery records a webhook delivery attempt whose outcome was stored:
// DeliveryDelivered, DeliveryRetrying or DeliveryGivenUp.
func (m *Metrics) Delivery(outcome string) {
	if m == nil {
		return
	}
	m.deliveries.WithLabelValues(outcome).Inc()
}

// ProviderEvent records a payment provider's webhook request: provider is
// the provider's name ("unknown" when the integration is not known) and
// outcome one of the Provider* outcomes.
func (m *Metrics) ProviderEvent(provider, outcome string) {
	if m == nil {
		return
	}
	m.providerEvents.WithLabelValues(provider, outcome).Inc()
}

// RateLimited records a request refused 429 by the rate limit named rule.
func (m *Metrics) RateLimited(rule string) {
	if m == nil {
		return
	}
	m.rateLimited.WithLabelValues(rule).Inc()
}

// RateLimiterFallback records whether the rate limits are counted by this
// process alone, the shared limiter being unreachable.
func (m *Metrics) RateLimiterFallback(on bool) {
	if m == nil {
		return
	}
	v := 0.0
	if on {
		v = 1
	}
	m.fallback.Set(v)
}

// RateLimitCountedLocally records one request counted by this process
// alone, the shared limiter being unreachable.
func (m *Metrics) RateLimitCountedLocally() {
	if m == nil {
		return
	}
	m.fallbackCounts.Inc()
}

// The activation routes, as the route label names them.
const (
	RouteActivate        = "activate"
	RouteActivateOffline = "activate_offline"
	RouteStatus          = "status"
	RouteDeactivate      = "deactivate"
	RouteLease           = "lease"
	RouteLeaseRenew      = "lease_renew"
	RouteLeaseRelease    = "lease_release"
)

// ResultOK is the result label of an activation route that answered 2xx.
const ResultOK = "ok"

// The outcomes of a webhook delivery attempt.
const (
	DeliveryDelivered = "delivered"
	// DeliveryRetrying is a failed attempt that will be made again later.
	DeliveryRetrying = "retrying"
	// DeliveryGivenUp is a failed attempt after which the delivery is not
	// tried again: its retries are spent, its endpoint is gone or turned
	// off, or its body is too large to send.
	DeliveryGivenUp = "given_up"
)

// The outcomes of a payment provider's webhook request.
const (
	// ProviderApplied is a new event whose effect (issue, end, convert) was
	// applied.
	ProviderApplied = "applied"
	// ProviderHeld is a new paid order that could not be issued as it
	// stood, kept as a held order and answered 200.
	ProviderHeld = "held"
	// ProviderRepeated is an event handled before: nothing changed.
	ProviderRepeated = "repeated"
	// ProviderIgnored is a new event of a kind the service does nothing
	// with; it is answered 200 all the same.
	ProviderIgnored = "ignored"
	// ProviderRefused is a request refused 400: a missing or wrong
	// signature, an unknown integration, a body that is not an event.
	ProviderRefused = "refused"
	// ProviderFailed is a request answered 5xx (the provider's API or the
	// database did not answer): the provider sends the event again.
	ProviderFailed = "failed"
)

// ProviderUnknown is the provider label of a request whose integration is
// not known.
const ProviderUnknown = "unknown"

// methodLabel is method when it is one of the standard methods, else
// "other": the method is the client's to choose, and a label must not take
// any value a client sends.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// statusLabels holds the status codes as text, so that recording a
// request allocates no string for it.
var statusLabels = func() [600]string {
	var s [600]string
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func statusLabel(status int) string {
	if status < 100 || status >= len(statusLabels) {
		return "other"
	}
	return statusLabels[status]
}

// Package httpapi serves the HTTP interface: the route table, middleware,
// the error envelope and the OpenAPI document. Handlers decode (with web's
// strict decoder), call one operation and write JSON; rules live in the
// operations.
package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/build"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/web"
)

// The deadlines of the HTTP server that serves a Server. A request, body
// included, must arrive within ReadTimeout of its start; the answer must be
// written within WriteTimeout of the end of its headers. WriteTimeout
// outlasts ReadTimeout so that a body still arriving when the read deadline
// passes is answered 408 request_timeout rather than cut off.
const (
	ReadTimeout  = 30 * time.Second
	WriteTimeout = ReadTimeout + 5*time.Second
)

// Options are the dependencies of a Server.
type Options struct {
	Store          store.Store
	Admin          *admin.Service
	Activation     *activation.Service
	Purchases      *purchase.Service
	Auth           *auth.Authenticator
	Limiter        ratelimit.Limiter
	Clock          clock.Clock
	Logger         *slog.Logger
	TrustedProxies []netip.Prefix
	// Ready reports problems that make the service not ready (beyond the
	// database), such as an unreachable shared rate limiter.
	Ready func() error
	// DatabaseTimeout bounds each request's work, its store calls above
	// all; 0 means web.DefaultDatabaseTimeout.
	DatabaseTimeout time.Duration
	// Metrics counts requests, activations and rate-limit refusals; nil
	// counts nothing.
	Metrics *metrics.Metrics
	// Build is what /healthz says of the binary; the zero value means the
	// running binary's own (build.Read).
	Build build.Info
}

// Server is the HTTP interface.
type Server struct {
	store      store.Store
	admin      *admin.Service
	activation *activation.Service
	purchases  *purchase.Service
	auth       *auth.Authenticator
	limiter    ratelimit.Limiter
	clock      clock.Clock
	log        *slog.Logger
	proxies    []netip.Prefix
	ready      func() error
	timeout    time.Duration
	metrics    *metrics.Metrics
	build      build.Info
	mux        *http.ServeMux
	handler    http.Handler
	observed   web.Observed
	// scopes holds each administration route's scope by pattern.
	scopes map[string]licentia.Scope
	// unsettled holds the Idempotency-Key claims to settle again.
	unsettled unsettled
}

// New returns a Server with every route registered.
func New(o Options) *Server {
	s := &Server{
		store: o.Store, admin: o.Admin, activation: o.Activation, purchases: o.Purchases, auth: o.Auth, limiter: o.Limiter, clock: o.Clock,
		log: o.Logger, proxies: o.TrustedProxies, ready: o.Ready, timeout: o.DatabaseTimeout, metrics: o.Metrics,
		build: o.Build, mux: http.NewServeMux(), scopes: map[string]licentia.Scope{},
	}
	if s.build == (build.Info{}) {
		s.build = build.Read()
	}
	if s.timeout <= 0 {
		s.timeout = web.DefaultDatabaseTimeout
	}
	s.observed = web.Observed{Log: s.log, Clock: s.clock, Metrics: s.metrics, Server: "api", Message: "request",
		Pattern: func(r *http.Request) string { _, p := s.mux.Handler(r); return p },
		Fail:    func(w http.ResponseWriter, r *http.Request, p any) { s.writeError(w, r, fmt.Errorf("panic: %v", p)) },
	}
	s.routes()
	s.handler = s.middleware(http.HandlerFunc(s.dispatch))
	return s
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

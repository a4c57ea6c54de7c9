// Package console serves the web console at /console/: server-rendered
// pages, usable without JavaScript, through which members of an
// organization act with the same operations as the API, as themselves, and
// the customer page where a buyer sees a purchase's keys and machines. One
// file per page group; templates and the stylesheet are embedded.
package console

import (
	"context"
	"embed"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/purchase"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/web"
)

//go:embed templates static
var files embed.FS

// Options are the dependencies of a Server.
type Options struct {
	// Store holds sessions and accounts; every other change goes through
	// Admin.
	Store     store.Store
	Admin     *admin.Service
	Purchases *purchase.Service
	// Activation answers the offline activation request files the
	// customer page takes.
	Activation *activation.Service
	// OAuth, when set, is the authorization server whose authorize
	// endpoint and consent page the console serves at /oauth/authorize.
	OAuth Authorizer
	Clock clock.Clock
	// Limiter counts failed sign-ins and the customer page's lookups, the
	// latter in the API's lookup limit, with the same subject.
	Limiter ratelimit.Limiter
	Logger  *slog.Logger
	// BaseURL is LICENTIA_BASE_URL. Under https the session cookie is
	// Secure with the __Host- prefix, and the base's origin is trusted for
	// form posts even where a proxy rewrites Host.
	BaseURL string
	// BaseURLDefaulted is set when LICENTIA_BASE_URL is unset and BaseURL
	// is the listen address: pages that show a public address say so.
	BaseURLDefaulted bool
	TrustedProxies   []netip.Prefix
	// DatabaseTimeout bounds each request's work; 0 means
	// web.DefaultDatabaseTimeout.
	DatabaseTimeout time.Duration
	// Metrics counts requests and rate-limit refusals; nil counts nothing.
	Metrics *metrics.Metrics
}

// Server is the web console.
type Server struct {
	store     store.Store
	admin     *admin.Service
	purchases *purchase.Service
	act       *activation.Service
	oauth     Authorizer
	clock     clock.Clock
	limiter   ratelimit.Limiter
	metrics   *metrics.Metrics
	log       *slog.Logger
	proxies   []netip.Prefix
	timeout   time.Duration
	secure    bool
	cookie    string
	origin    *http.CrossOriginProtection
	pages     pages
	mux       *http.ServeMux
	handler   http.Handler
	observed  web.Observed
	// passwordChecks counts the passwords checked against a stored hash,
	// the work the sign-in limits bound, so that tests can see them bound.
	passwordChecks atomic.Int64
	// base is the service's public address, and baseDefaulted whether it
	// is only the listen address (Options.BaseURLDefaulted).
	base          string
	baseDefaulted bool
}

// New returns a Server with every page registered.
func New(o Options) (*Server, error) {
	s := &Server{
		store: o.Store, admin: o.Admin, purchases: o.Purchases, act: o.Activation, oauth: o.OAuth, clock: o.Clock, limiter: o.Limiter, metrics: o.Metrics,
		log: o.Logger, proxies: o.TrustedProxies, timeout: o.DatabaseTimeout, cookie: cookieName, mux: http.NewServeMux(),
		base: strings.TrimRight(o.BaseURL, "/"), baseDefaulted: o.BaseURLDefaulted,
	}
	if s.timeout <= 0 {
		s.timeout = web.DefaultDatabaseTimeout
	}
	var err error
	if s.origin, s.secure, err = web.PageOrigins(o.BaseURL, http.HandlerFunc(s.crossOrigin)); err != nil {
		return nil, err
	}
	if s.secure {
		s.cookie = secureCookieName
	}
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	s.observed = web.Observed{Log: s.log, Clock: s.clock, Metrics: s.metrics, Server: "console", Message: "console request",
		Pattern: func(r *http.Request) string { _, p := s.mux.Handler(r); return p },
		Fail:    func(w http.ResponseWriter, r *http.Request, _ any) { s.fail(w, r, nil, errPanic) },
	}
	s.routes()
	s.handler = s.middleware(s.mux)
	return s, nil
}

// Handler returns the console's handler: /console/..., / redirecting to
// /console/, and with an authorization server /oauth/authorize.
func (s *Server) Handler() http.Handler { return s.handler }

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// requestID is the id the middleware gave the request of ctx.
func requestID(ctx context.Context) string { return web.PageRequestID(ctx) }

// middleware wraps every request as every front door of pages does
// (web.PageMiddleware).
func (s *Server) middleware(next http.Handler) http.Handler {
	return web.PageMiddleware(&s.observed, s.timeout, next)
}

// clientAddr is the client's address, by the API's rule, so the customer
// page and the API's lookup count in one limit.
func (s *Server) clientAddr(r *http.Request) string { return web.ClientAddr(r, s.proxies) }

// MaxBody is the largest form a console page takes, as the API's bodies.
const MaxBody = web.MaxBody

// readForm parses a posted form of at most MaxBody bytes.
func readForm(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength > MaxBody {
		return errTooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	if err := r.ParseForm(); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return errTooLarge
		}
		return errBadForm
	}
	return nil
}

// Package portal serves the customer portal at /portal/{org_slug}/: the
// pages where a maker's customer, signed in by a link mailed to them,
// sees every licence of their address in that organization and manages
// them (frees and renames machines, activates one offline, mails the key
// again, reissues it). Pages carry the organization's branding, hold no
// script, and act through the same operations as the API, audited as the
// customer. It is a front door: it imports web for the plumbing it shares
// with the others, and no other front door.
package portal

import (
	"context"
	"embed"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/web"
)

//go:embed templates static
var files embed.FS

// Options are the dependencies of a Server.
type Options struct {
	// Store holds the sign-in links and sessions, and is read for the
	// organization and its customer's licences; every change goes
	// through Admin or Activation.
	Store      store.Store
	Admin      *admin.Service
	Activation *activation.Service
	// Keys derives the sign-in links' tokens, as the courier does when it
	// mails them.
	Keys    *signing.Keyring
	Clock   clock.Clock
	Limiter ratelimit.Limiter
	Logger  *slog.Logger
	// BaseURL is the public base URL. Under https the session cookie is
	// Secure with the __Host- prefix, and the base's origin is trusted for
	// form posts even where a proxy rewrites Host.
	BaseURL        string
	TrustedProxies []netip.Prefix
	// DatabaseTimeout bounds each request's work; 0 means
	// web.DefaultDatabaseTimeout.
	DatabaseTimeout time.Duration
	// Metrics counts requests and rate-limit refusals; nil counts nothing.
	Metrics *metrics.Metrics
}

// Server is the customer portal.
type Server struct {
	store    store.Store
	admin    *admin.Service
	act      *activation.Service
	keys     *signing.Keyring
	clock    clock.Clock
	limiter  ratelimit.Limiter
	metrics  *metrics.Metrics
	log      *slog.Logger
	proxies  []netip.Prefix
	timeout  time.Duration
	secure   bool
	cookie   string
	origin   *http.CrossOriginProtection
	pages    pages
	mux      *http.ServeMux
	handler  http.Handler
	observed web.Observed
}

// New returns a Server with every page registered.
func New(o Options) (*Server, error) {
	s := &Server{store: o.Store, admin: o.Admin, act: o.Activation, keys: o.Keys, clock: o.Clock, limiter: o.Limiter,
		metrics: o.Metrics, log: o.Logger, proxies: o.TrustedProxies, timeout: o.DatabaseTimeout, cookie: cookieName,
		mux: http.NewServeMux()}
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
	s.observed = web.Observed{Log: s.log, Clock: s.clock, Metrics: s.metrics, Server: "portal", Message: "portal request",
		Pattern: func(r *http.Request) string { _, p := s.mux.Handler(r); return p },
		Fail:    func(w http.ResponseWriter, r *http.Request, _ any) { s.fail(w, r, nil, errPanic) },
	}
	s.routes()
	s.handler = s.middleware(s.mux)
	return s, nil
}

// Handler returns the portal's handler, for /portal/.
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

// now reads the clock at the precision the store keeps.
func (s *Server) now() time.Time { return licentia.TruncateMillis(s.clock.Now()) }

// clientAddr is the client's address, by the API's rule.
func (s *Server) clientAddr(r *http.Request) string { return web.ClientAddr(r, s.proxies) }

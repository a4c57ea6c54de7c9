// Package oauth is the authorization server through which a member lets an
// AI assistant act as them: metadata (RFC 8414, RFC 9728), dynamic client
// registration (RFC 7591), authorization codes with PKCE S256, tokens
// (authorization_code and refresh_token grants, refresh tokens rotated on
// use) and revocation (RFC 7009). Tokens and codes are opaque and only
// their hashes are kept. The consent page, which needs the console's
// sessions, lives in the console and calls this package's Service.
package oauth

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/store"
)

// CodeLifetime is how long an authorization code may be exchanged.
const CodeLifetime = 10 * time.Minute

// ResourcePath is the path of the one protected resource, the MCP server.
const ResourcePath = "/mcp"

// Options are the dependencies of a Service.
type Options struct {
	Store store.Store
	Clock clock.Clock
	// Limiter counts registrations per client address.
	Limiter ratelimit.Limiter
	Logger  *slog.Logger
	// BaseURL is the service's public address, as people and clients
	// open it: the issuer.
	BaseURL        string
	TrustedProxies []netip.Prefix
	// DatabaseTimeout bounds each request's work; 0 means
	// web.DefaultDatabaseTimeout.
	DatabaseTimeout time.Duration
	// Metrics counts requests; nil counts nothing.
	Metrics *metrics.Metrics
}

// Service is the authorization server.
type Service struct {
	store   store.Store
	clock   clock.Clock
	limiter ratelimit.Limiter
	log     *slog.Logger
	issuer  string
	proxies []netip.Prefix
	timeout time.Duration
	metrics *metrics.Metrics
}

// New returns a Service.
func New(o Options) *Service {
	return &Service{store: o.Store, clock: o.Clock, limiter: o.Limiter, log: o.Logger,
		issuer: strings.TrimRight(o.BaseURL, "/"), proxies: o.TrustedProxies, timeout: o.DatabaseTimeout, metrics: o.Metrics}
}

// Issuer is the authorization server's identifier (RFC 8414): the
// service's public base address.
func (s *Service) Issuer() string { return s.issuer }

// Resource is the address of the MCP server, the one resource (RFC 8707)
// tokens are for.
func (s *Service) Resource() string { return s.issuer + ResourcePath }

// now reads the clock once per operation, at the precision the store
// keeps.
func (s *Service) now() time.Time { return licentia.TruncateMillis(s.clock.Now()) }

// SweepCodes deletes the authorization codes past their expiry, which no
// exchange accepts any more, and reports how many. Serve runs it now and
// then; expiry does not wait for it.
func (s *Service) SweepCodes(ctx context.Context) (int64, error) {
	now := s.now()
	var n int64
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.DeleteExpiredAuthorizationCodes(ctx, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sweep authorization codes: %w", err)
	}
	return n, nil
}

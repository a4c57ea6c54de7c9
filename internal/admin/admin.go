// Package admin holds the administration operations, for any caller: the
// HTTP routes, the operator commands and, later, the console, the MCP server
// and payment providers. Each operation validates its input, applies the
// contract's rules and writes its change with its audit entry in one
// transaction.
package admin

import (
	"context"
	"log/slog"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// Service runs administration operations.
type Service struct {
	store     store.Store
	clock     clock.Clock
	plans     licentia.Plans
	keys      *signing.Keyring
	catalogue *signing.Catalogue
	log       *slog.Logger
	baseURL   string
	publicURL string
	providers map[providers.Name]providers.Provider
	mail      mail.Sender
	metrics   *metrics.Metrics
	// localTags signs list cursors when there is no master key.
	localTags *signing.MasterKey
}

// Options are the dependencies of a Service.
type Options struct {
	Store store.Store
	Clock clock.Clock
	Plans licentia.Plans
	// Keys may hold no master key; then product creation and rotation answer
	// 503 signing_keys_not_configured.
	Keys *signing.Keyring
	// Catalogue, when set, is reloaded after every product change, so this
	// process verifies licence keys by the new keys at once.
	Catalogue *signing.Catalogue
	// BaseURL is LICENTIA_BASE_URL; webhooks need it.
	BaseURL string
	// PublicURL starts the links mailed and printed for the console: the
	// base URL, or the listen address when there is none.
	PublicURL string
	// Providers are the payment providers' adapters by name; a provider
	// without one cannot be connected.
	Providers map[providers.Name]providers.Provider
	// Mail sends invitations; without it, inviting answers 503.
	Mail   mail.Sender
	Logger *slog.Logger
	// Metrics counts payment providers' webhook events; nil counts
	// nothing.
	Metrics *metrics.Metrics
}

// New returns a Service.
func New(o Options) *Service {
	return &Service{store: o.Store, clock: o.Clock, plans: o.Plans, keys: o.Keys, catalogue: o.Catalogue,
		baseURL: o.BaseURL, log: o.Logger, providers: o.Providers, mail: o.Mail, publicURL: o.PublicURL,
		metrics: o.Metrics, localTags: newLocalTags()}
}

// limits returns the limits of an organization's plan.
func (s *Service) limits(o *licentia.Organization) (licentia.Limits, error) {
	return s.plans.Limits(o.Plan)
}

// now reads the clock once per operation, at the millisecond precision that
// answers show and every engine keeps.
func (s *Service) now() time.Time { return licentia.TruncateMillis(s.clock.Now()) }

// productChanged reloads the catalogue after a product change commits. A
// failed reload is logged: the periodic refresh catches up within seconds.
func (s *Service) productChanged(ctx context.Context) {
	if s.catalogue == nil {
		return
	}
	if err := s.catalogue.Refresh(ctx); err != nil {
		s.log.Warn("catalogue refresh after a product change failed", "error", err.Error())
	}
}

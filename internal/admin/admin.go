// Package admin holds the administration operations, for any caller: the
// HTTP routes, the operator commands and, later, the console, the MCP server
// and payment providers. Each operation validates its input, applies the
// contract's rules and writes its change with its audit entry in one
// transaction.
package admin

import (
	"log/slog"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// Service runs administration operations.
type Service struct {
	store store.Store
	clock clock.Clock
	plans licentia.Plans
	keys  *signing.Keyring
	log   *slog.Logger
	// baseURL is LICENTIA_BASE_URL; webhooks need it.
	baseURL string
}

// New returns a Service. keys may hold no master key; then product creation
// and rotation answer 503 signing_keys_not_configured.
func New(st store.Store, clk clock.Clock, plans licentia.Plans, keys *signing.Keyring, log *slog.Logger) *Service {
	return &Service{store: st, clock: clk, plans: plans, keys: keys, log: log}
}

// limits returns the limits of an organization's plan.
func (s *Service) limits(o *licentia.Organization) (licentia.Limits, error) {
	return s.plans.Limits(o.Plan)
}

// now reads the clock once per operation, at the millisecond precision that
// answers show and every engine keeps.
func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Millisecond) }

// SetBaseURL records the service's public address (LICENTIA_BASE_URL), which
// webhooks need; call it before serving.
func (s *Service) SetBaseURL(u string) { s.baseURL = u }

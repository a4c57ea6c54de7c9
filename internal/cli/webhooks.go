package cli

import (
	"crypto/x509"
	"log/slog"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/webhooks"
)

// newWorker builds the delivery worker, with the test-only pins and extra
// roots when they are set (and said loudly, since they weaken the address
// checks for the pinned names).
func newWorker(cfg config.Config, st store.Store, clk clock.Clock, keys *signing.Keyring, m *metrics.Metrics, log *slog.Logger) (*webhooks.Worker, error) {
	d := &webhooks.Dialer{}
	if len(cfg.WebhookResolve) > 0 {
		pins, err := webhooks.ParsePins(cfg.WebhookResolve)
		if err != nil {
			return nil, err
		}
		d.Pins = pins
		log.Warn("TEST ONLY: LICENTIA_WEBHOOK_RESOLVE pins webhook hosts; pinned hosts skip the public-address check", "pins", len(pins))
	}
	var roots *x509.CertPool
	if cfg.WebhookCAFile != "" {
		pool, err := webhooks.LoadCAFile(cfg.WebhookCAFile)
		if err != nil {
			return nil, err
		}
		roots = pool
		log.Warn("TEST ONLY: LICENTIA_WEBHOOK_CA_FILE adds trusted roots for webhook deliveries", "file", cfg.WebhookCAFile)
	}
	return webhooks.NewWorker(webhooks.WorkerOptions{
		Store: st, Clock: clk, Keys: keys, Client: webhooks.NewHTTPClient(d, roots, cfg.BaseURL),
		BaseURL: cfg.BaseURL, Logger: log, Metrics: m,
	}), nil
}

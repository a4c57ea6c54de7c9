package cli

import (
	"log/slog"

	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/stripe"
)

// newProviders builds one adapter per payment provider, at the test-only
// API addresses when they are set.
func newProviders(cfg config.Config) map[providers.Name]providers.Provider {
	return map[providers.Name]providers.Provider{
		providers.Stripe:       stripe.New(cfg.StripeAPIURL, providers.Timeout),
		providers.Paddle:       paddle.New(cfg.PaddleAPIURL, providers.Timeout),
		providers.LemonSqueezy: lemonsqueezy.New(cfg.LemonSqueezyAPIURL, providers.Timeout),
	}
}

// warnProviderAddresses says loudly, when serve starts, that a provider's
// API is pointed elsewhere: there a provider's answers decide which
// licences are issued. An operator command sets such an address for itself
// and prints only its own answer.
func warnProviderAddresses(cfg config.Config, log *slog.Logger) {
	for _, o := range cfg.ProviderAPIURLs() {
		if o.URL != "" {
			log.Warn("TEST ONLY: "+o.Variable+" sends payment provider API calls to another address", "url", o.URL)
		}
	}
}

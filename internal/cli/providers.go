package cli

import (
	"log/slog"

	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/stripe"
)

// newProviders builds one adapter per payment provider. A test-only API
// address is said loudly: pointed elsewhere, a provider's answers decide
// which licences are issued.
func newProviders(cfg config.Config, log *slog.Logger) map[providers.Name]providers.Provider {
	for _, o := range []struct {
		variable, url string
	}{
		{"LICENTIA_STRIPE_API_URL", cfg.StripeAPIURL},
		{"LICENTIA_PADDLE_API_URL", cfg.PaddleAPIURL},
		{"LICENTIA_LEMONSQUEEZY_API_URL", cfg.LemonSqueezyAPIURL},
	} {
		if o.url != "" {
			log.Warn("TEST ONLY: "+o.variable+" sends payment provider API calls to another address", "url", o.url)
		}
	}
	return map[providers.Name]providers.Provider{
		providers.Stripe:       stripe.New(cfg.StripeAPIURL, providers.Timeout),
		providers.Paddle:       paddle.New(cfg.PaddleAPIURL, providers.Timeout),
		providers.LemonSqueezy: lemonsqueezy.New(cfg.LemonSqueezyAPIURL, providers.Timeout),
	}
}

// Package stripe adapts Stripe to the providers interfaces through
// stripe-go: its API client for accounts, products, checkout line items and
// subscriptions, and its signature check for Stripe-Signature.
package stripe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	stripeapi "github.com/stripe/stripe-go/v85"

	"github.com/licentia/licentia/internal/providers"
)

// Client calls Stripe's API with a maker's key and reads Stripe's webhooks.
type Client struct {
	backends *stripeapi.Backends
}

var _ providers.Provider = (*Client)(nil)

// New returns a Client for Stripe's API at baseURL (empty for Stripe's own,
// https://api.stripe.com; the address without /v1, as stripe-go takes it),
// each call bounded by timeout (providers.Timeout outside tests).
func New(baseURL string, timeout time.Duration) *Client {
	cfg := &stripeapi.BackendConfig{
		HTTPClient: &http.Client{Timeout: timeout},
		// The webhook route answers 503 and Stripe sends the event again;
		// an operator retries a connect. Retrying here would only hold a
		// request open past the timeout the contract promises.
		MaxNetworkRetries: stripeapi.Int64(0),
		EnableTelemetry:   stripeapi.Bool(false),
		// stripe-go's default logger writes to stderr, outside the
		// service's structured log.
		LeveledLogger: &stripeapi.LeveledLogger{Level: stripeapi.LevelNull},
	}
	if baseURL != "" {
		cfg.URL = stripeapi.String(strings.TrimRight(baseURL, "/"))
	}
	return &Client{backends: stripeapi.NewBackendsWithConfig(cfg)}
}

func (c *Client) api(apiKey string) *stripeapi.Client {
	return stripeapi.NewClient(apiKey, stripeapi.WithBackends(c.backends))
}

// Account checks apiKey with GET /v1/account. Stripe's account object has no
// live or test flag; the key's own prefix (sk_live_, rk_live_) says which.
func (c *Client) Account(ctx context.Context, apiKey string) (*providers.Account, error) {
	acct, err := c.api(apiKey).V1Accounts.Retrieve(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("stripe account: %w", apiError(err, false))
	}
	if acct.ID == "" {
		return nil, fmt.Errorf("stripe account: %w: answer names no account", providers.ErrUnavailable)
	}
	return &providers.Account{ID: acct.ID, Livemode: isLiveKey(apiKey)}, nil
}

// Product checks with GET /v1/products/{id} that the account sells
// productID, the id a Stripe mapping names (prod_...).
func (c *Client) Product(ctx context.Context, apiKey, productID string) error {
	if _, err := c.api(apiKey).V1Products.Retrieve(ctx, productID, nil); err != nil {
		return fmt.Errorf("stripe product: %w", apiError(err, true))
	}
	return nil
}

func isLiveKey(apiKey string) bool {
	return strings.HasPrefix(apiKey, "sk_live_") || strings.HasPrefix(apiKey, "rk_live_")
}

// apiError maps a stripe-go failure to the providers errors. Stripe's own
// message is dropped: a refused key's message quotes part of the key.
func apiError(err error, product bool) error {
	var se *stripeapi.Error
	if !errors.As(err, &se) {
		// Network failures and timeouts, without the URL: it names the
		// checkout or the order.
		return fmt.Errorf("%w: %w", providers.ErrUnavailable, providers.TransportError(err))
	}
	switch {
	case se.HTTPStatusCode == http.StatusUnauthorized:
		return providers.ErrTokenRefused
	case se.HTTPStatusCode == http.StatusForbidden:
		return providers.ErrPermissionDenied
	case se.HTTPStatusCode == http.StatusNotFound && product:
		return providers.ErrNoSuchProduct
	default:
		return fmt.Errorf("%w: status %d", providers.ErrUnavailable, se.HTTPStatusCode)
	}
}

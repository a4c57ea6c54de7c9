// Package providers is what the service asks of a payment provider, behind
// one interface: stripe/, paddle/ and lemonsqueezy/ each adapt one
// provider's API, signatures and events. Adapters never hold licence rules:
// they turn what a provider says into calls of the administration
// operations.
package providers

import (
	"context"
	"errors"
	"time"
)

// Name names a provider as the contract spells it.
type Name string

const (
	Stripe       Name = "stripe"
	Paddle       Name = "paddle"
	LemonSqueezy Name = "lemonsqueezy"
)

// Names lists every provider, in the order documents list them.
var Names = []Name{Stripe, Paddle, LemonSqueezy}

// Timeout bounds every call to a provider's API.
const Timeout = 10 * time.Second

// Account is the provider account a key belongs to.
type Account struct {
	ID       string
	Livemode bool
}

// Client calls one provider's API with a maker's key.
type Client interface {
	// Account checks apiKey and names its account (Stripe: GET /v1/account).
	Account(ctx context.Context, apiKey string) (*Account, error)
	// Product checks that the account knows a product; it answers
	// ErrNoSuchProduct when it does not.
	Product(ctx context.Context, apiKey, productID string) error
}

// The failures a Client reports, whatever the provider; the operations map
// them to the contract's codes. A call the provider did not answer within
// Timeout, answered with a 5xx, or that failed on the network wraps
// ErrUnavailable.
var (
	ErrTokenRefused     = errors.New("the provider refused the key")          // 401
	ErrPermissionDenied = errors.New("the key may not do this")               // 403
	ErrNoSuchProduct    = errors.New("the provider knows no such product")    // 404 for a product
	ErrUnavailable      = errors.New("the provider did not answer or failed") // timeout, 5xx, network
)

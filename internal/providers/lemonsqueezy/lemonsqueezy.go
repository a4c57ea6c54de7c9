// Package lemonsqueezy adapts Lemon Squeezy to the providers interfaces,
// with the standard library: a few JSON:API calls and the X-Signature HMAC.
// Lemon Squeezy has no official Go library.
//
// A mapping names a variant id, not a product id: orders and subscriptions
// carry the variant bought (first_order_item.variant_id, variant_id), and a
// product's variants are what a maker prices differently (monthly, yearly,
// team). The numeric id is shown in the dashboard's variant list and by
// GET /v1/variants.
package lemonsqueezy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/providers"
)

// DefaultBaseURL is Lemon Squeezy's API address.
const DefaultBaseURL = "https://api.lemonsqueezy.com"

// Client calls Lemon Squeezy's API with a maker's key and reads its webhooks.
type Client struct {
	api providers.API
}

var _ providers.Provider = (*Client)(nil)

// New returns a Client for the API at baseURL (empty for DefaultBaseURL),
// each call bounded by timeout (providers.Timeout outside tests).
func New(baseURL string, timeout time.Duration) *Client {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	return &Client{api: providers.API{
		BaseURL: strings.TrimRight(baseURL, "/"),
		HTTP:    &http.Client{Timeout: timeout},
		Header:  http.Header{"Accept": {"application/vnd.api+json"}},
	}}
}

// Account checks apiKey with GET /v1/users/me: a key belongs to a user, who
// may own several stores, so the user is the account. Keys are made in test
// or live mode, which the answer's meta.test_mode says.
func (c *Client) Account(ctx context.Context, apiKey string) (*providers.Account, error) {
	var doc struct {
		Meta struct {
			TestMode bool `json:"test_mode"`
		} `json:"meta"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := c.api.Get(ctx, apiKey, "/v1/users/me", nil, &doc); err != nil {
		return nil, fmt.Errorf("lemonsqueezy account: %w", err)
	}
	if doc.Data.ID == "" {
		return nil, fmt.Errorf("lemonsqueezy account: %w: answer names no user", providers.ErrUnavailable)
	}
	return &providers.Account{ID: doc.Data.ID, Livemode: !doc.Meta.TestMode}, nil
}

// Product checks with GET /v1/variants/{id} that the key's stores sell the
// variant productID (see the package comment).
func (c *Client) Product(ctx context.Context, apiKey, productID string) error {
	if _, err := c.variant(ctx, apiKey, productID, providers.ErrNoSuchProduct); err != nil {
		return fmt.Errorf("lemonsqueezy variant: %w", err)
	}
	return nil
}

type variant struct {
	IsSubscription bool `json:"is_subscription"`
}

func (c *Client) variant(ctx context.Context, apiKey, id string, notFound error) (*variant, error) {
	var doc struct {
		Data struct {
			Attributes variant `json:"attributes"`
		} `json:"data"`
	}
	if err := c.api.Get(ctx, apiKey, "/v1/variants/"+url.PathEscape(id), notFound, &doc); err != nil {
		return nil, err
	}
	return &doc.Data.Attributes, nil
}

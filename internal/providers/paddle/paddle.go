// Package paddle adapts Paddle Billing to the providers interfaces with the
// standard library: four GET calls and the Paddle-Signature HMAC.
//
// Paddle's Go SDK (paddle-go-sdk) is not used. Its webhook verifier checks
// no timestamp (so a captured request could be replayed at any time),
// accepts only one h1 (Paddle sends several while a secret is rotated) and
// reads an *http.Request rather than the body the route already holds; its
// API client is built around one key per client, where the service calls
// with each maker's own key; and it adds three modules for four GETs.
//
// A mapping names a Paddle product id (pro_...): transactions carry it on
// each item's price (items[].price.product_id), so every price of a product
// (monthly, yearly) issues the same licence.
package paddle

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/providers"
)

// Paddle's two API addresses: a sandbox key works only against the sandbox.
const (
	LiveURL    = "https://api.paddle.com"
	SandboxURL = "https://sandbox-api.paddle.com"
)

// Client calls Paddle's API with a maker's key and reads its webhooks.
type Client struct {
	baseURL string // set in tests; otherwise chosen by the key
	http    *http.Client
}

var _ providers.Provider = (*Client)(nil)

// New returns a Client. With baseURL empty, each call goes to the live or
// the sandbox API as the key says; baseURL replaces both (a fake's
// address). Each call is bounded by timeout (providers.Timeout outside
// tests).
func New(baseURL string, timeout time.Duration) *Client {
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), http: &http.Client{Timeout: timeout}}
}

func (c *Client) api(apiKey string) providers.API {
	base := c.baseURL
	if base == "" {
		base = LiveURL
		if isSandboxKey(apiKey) {
			base = SandboxURL
		}
	}
	return providers.API{
		BaseURL: base,
		HTTP:    c.http,
		Header:  http.Header{"Accept": {"application/json"}, "Paddle-Version": {"1"}},
	}
}

// isSandboxKey reports whether apiKey is a sandbox key. Keys made since May
// 2025 read pdl_sdbx_apikey_... or pdl_live_apikey_...; older keys say
// nothing and are taken as live.
func isSandboxKey(apiKey string) bool {
	return strings.HasPrefix(apiKey, "pdl_sdbx_")
}

// keyID is the public id of a key in the current format (apikey_01...), the
// part the dashboard lists; the secret part after it is never used.
func keyID(apiKey string) string {
	parts := strings.Split(apiKey, "_")
	if len(parts) < 5 || parts[0] != "pdl" || parts[2] != "apikey" {
		return ""
	}
	return "apikey_" + parts[3]
}

// Account checks apiKey with GET /event-types, the one call Paddle answers
// for a key whatever its permissions. Paddle's API names no seller account,
// so the account is named by the key's public id (empty for keys older than
// May 2025, which have none).
func (c *Client) Account(ctx context.Context, apiKey string) (*providers.Account, error) {
	var doc struct {
		Data []struct {
			Name string `json:"name"`
		} `json:"data"`
	}
	if err := c.api(apiKey).Get(ctx, apiKey, "/event-types", nil, &doc); err != nil {
		return nil, fmt.Errorf("paddle account: %w", err)
	}
	return &providers.Account{ID: keyID(apiKey), Livemode: !isSandboxKey(apiKey)}, nil
}

// Product checks with GET /products/{id} that the account sells productID
// (pro_...).
func (c *Client) Product(ctx context.Context, apiKey, productID string) error {
	var doc struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := c.api(apiKey).Get(ctx, apiKey, "/products/"+url.PathEscape(productID), providers.ErrNoSuchProduct, &doc); err != nil {
		return fmt.Errorf("paddle product: %w", err)
	}
	return nil
}

package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/providers"
)

// stripeFake is a loopback fake of the two calls of Stripe's API that
// connecting and mapping make: GET /v1/account and GET /v1/products/{id},
// with Bearer keys as Stripe takes them and its error bodies. A key it
// does not know answers 401; a restricted key without the product
// permission 403; an unknown product 404; fail makes every call answer
// 500, and hang holds every call until the test ends.
type stripeFake struct {
	srv *httptest.Server

	mu         sync.Mutex
	keys       map[string]string // key -> account id
	restricted map[string]bool
	products   map[string]bool
	fail, hang bool
	calls      []string // "METHOD path key"
}

func newStripeFake(t *testing.T) *stripeFake {
	t.Helper()
	f := &stripeFake{keys: map[string]string{}, restricted: map[string]bool{}, products: map[string]bool{}}
	done := make(chan struct{})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serve(w, r, done) }))
	t.Cleanup(func() { close(done); f.srv.Close() })
	return f
}

func (f *stripeFake) set(fn func(f *stripeFake)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *stripeFake) callCount() int { return len(f.callList()) }

// callList returns the calls so far, each "METHOD path key".
func (f *stripeFake) callList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func stripeError(w http.ResponseWriter, status int, typ, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": typ, "code": code, "message": msg}})
}

func (f *stripeFake) serve(w http.ResponseWriter, r *http.Request, done chan struct{}) {
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path+" "+key)
	acct, known := f.keys[key]
	restricted, fail, hang := f.restricted[key], f.fail, f.hang
	productID, isProduct := strings.CutPrefix(r.URL.Path, "/v1/products/")
	hasProduct := f.products[productID]
	f.mu.Unlock()
	switch {
	case hang:
		select {
		case <-done:
		case <-r.Context().Done():
		}
		return
	case fail:
		stripeError(w, http.StatusInternalServerError, "api_error", "", "An unknown error occurred")
	case r.Method != http.MethodGet:
		stripeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "Unrecognized request URL")
	case !known:
		stripeError(w, http.StatusUnauthorized, "invalid_request_error", "", "Invalid API Key provided: "+redactKey(key))
	case r.URL.Path == "/v1/account":
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": acct, "object": "account"})
	case isProduct && restricted:
		stripeError(w, http.StatusForbidden, "invalid_request_error", "secret_key_required",
			"The provided key does not have the required permissions for this endpoint")
	case isProduct && !hasProduct:
		stripeError(w, http.StatusNotFound, "invalid_request_error", "resource_missing", "No such product: '"+productID+"'")
	case isProduct:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": productID, "object": "product", "livemode": strings.HasPrefix(key, "sk_live_")})
	default:
		stripeError(w, http.StatusNotFound, "invalid_request_error", "", "Unrecognized request URL")
	}
}

// redactKey shows a key as Stripe's error messages do: its start and end.
func redactKey(k string) string {
	if len(k) < 12 {
		return "****"
	}
	return k[:8] + "****" + k[len(k)-4:]
}

// stripeClient is a small providers.Client over the fake, reading Stripe's
// answers as an adapter must: 401 refused, 403 permission, 404 no such
// product, 5xx, a timeout or a network error unavailable. Its errors never
// hold the key.
type stripeClient struct {
	base    string
	timeout time.Duration
}

var _ providers.Client = stripeClient{}

func (c stripeClient) get(ctx context.Context, apiKey, path string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, errors.Join(providers.ErrUnavailable, errors.Unwrap(err)))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		return json.NewDecoder(resp.Body).Decode(out)
	case resp.StatusCode == http.StatusUnauthorized:
		return providers.ErrTokenRefused
	case resp.StatusCode == http.StatusForbidden:
		return providers.ErrPermissionDenied
	case resp.StatusCode == http.StatusNotFound && strings.HasPrefix(path, "/v1/products/"):
		return providers.ErrNoSuchProduct
	case resp.StatusCode >= 500:
		return fmt.Errorf("GET %s: status %d: %w", path, resp.StatusCode, providers.ErrUnavailable)
	}
	return fmt.Errorf("GET %s: unexpected status %d", path, resp.StatusCode)
}

func (c stripeClient) Account(ctx context.Context, apiKey string) (*providers.Account, error) {
	var a struct {
		ID string `json:"id"`
	}
	if err := c.get(ctx, apiKey, "/v1/account", &a); err != nil {
		return nil, err
	}
	return &providers.Account{ID: a.ID, Livemode: strings.HasPrefix(apiKey, "sk_live_")}, nil
}

func (c stripeClient) Product(ctx context.Context, apiKey, productID string) error {
	var p struct {
		ID string `json:"id"`
	}
	return c.get(ctx, apiKey, "/v1/products/"+url.PathEscape(productID), &p)
}

// client returns a providers.Client for the fake, whose calls give up after
// timeout, standing for providers.Timeout.
func (f *stripeFake) client(timeout time.Duration) map[providers.Name]providers.Client {
	return map[providers.Name]providers.Client{providers.Stripe: stripeClient{base: f.srv.URL, timeout: timeout}}
}

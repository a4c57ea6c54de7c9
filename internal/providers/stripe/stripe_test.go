package stripe_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
)

const testKey = "sk_test_51Secret"

// shortTimeout stands in for providers.Timeout so a hanging fake ends fast.
const shortTimeout = 200 * time.Millisecond

func TestAccount(t *testing.T) {
	for _, tt := range []struct {
		name    string
		outcome providertest.Outcome
		key     string
		wantErr error
	}{
		{"ok", providertest.OK, testKey, nil},
		{"unknown key", providertest.OK, "sk_test_other", providers.ErrTokenRefused},
		{"401", providertest.TokenRefused, testKey, providers.ErrTokenRefused},
		{"403", providertest.PermissionDenied, testKey, providers.ErrPermissionDenied},
		{"500", providertest.ServerError, testKey, providers.ErrUnavailable},
		{"hang", providertest.Hang, testKey, providers.ErrUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := providertest.NewStripe(t, testKey)
			fake.SetOutcome(tt.outcome)
			acct, err := stripe.New(fake.URL(), shortTimeout).Account(t.Context(), tt.key)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Account() error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), tt.key) {
					t.Errorf("Account() error %q carries the key", err)
				}
				return
			}
			if acct.ID != fake.AccountID || acct.Livemode {
				t.Errorf("Account() = %+v, want {%s false}", acct, fake.AccountID)
			}
		})
	}
}

func TestAccountLivemodeFromKey(t *testing.T) {
	const live = "sk_live_51Secret"
	fake := providertest.NewStripe(t, live)
	acct, err := stripe.New(fake.URL(), shortTimeout).Account(t.Context(), live)
	if err != nil {
		t.Fatal(err)
	}
	if !acct.Livemode {
		t.Errorf("Account() livemode = false for a live key")
	}
}

func TestAccountNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := stripe.New(url, shortTimeout).Account(t.Context(), testKey)
	if !errors.Is(err, providers.ErrUnavailable) || strings.Contains(err.Error(), testKey) {
		t.Errorf("Account() error = %v, want ErrUnavailable without the key", err)
	}
}

func TestProduct(t *testing.T) {
	for _, tt := range []struct {
		name    string
		outcome providertest.Outcome
		product string
		wantErr error
	}{
		{"ok", providertest.OK, "prod_Known", nil},
		{"unknown product", providertest.OK, "prod_Unknown", providers.ErrNoSuchProduct},
		{"401", providertest.TokenRefused, "prod_Known", providers.ErrTokenRefused},
		{"403", providertest.PermissionDenied, "prod_Known", providers.ErrPermissionDenied},
		{"404", providertest.NotFound, "prod_Known", providers.ErrNoSuchProduct},
		{"500", providertest.ServerError, "prod_Known", providers.ErrUnavailable},
		{"hang", providertest.Hang, "prod_Known", providers.ErrUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := providertest.NewStripe(t, testKey)
			fake.AddProduct("prod_Known")
			fake.SetOutcome(tt.outcome)
			err := stripe.New(fake.URL(), shortTimeout).Product(t.Context(), testKey, tt.product)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Product() error = %v, want %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Errorf("Product() error %q carries the key", err)
			}
		})
	}
}

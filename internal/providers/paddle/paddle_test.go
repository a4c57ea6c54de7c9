package paddle_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
)

const (
	testKey = "pdl_sdbx_apikey_01gtgztp8f4kek3yd4g1wrksa3_q6TGTJyvoIz7LDtXT65bX7_AQO"
	liveKey = "pdl_live_apikey_01gtgztp8f4kek3yd4g1wrksa4_q6TGTJyvoIz7LDtXT65bX7_AQO"
)

// shortTimeout stands in for providers.Timeout so a hanging fake ends fast.
const shortTimeout = 200 * time.Millisecond

func TestAccount(t *testing.T) {
	for _, tt := range []struct {
		name    string
		outcome providertest.Outcome
		key     string
		want    providers.Account
		wantErr error
	}{
		{"sandbox key", providertest.OK, testKey, providers.Account{ID: "apikey_01gtgztp8f4kek3yd4g1wrksa3"}, nil},
		{"live key", providertest.OK, liveKey, providers.Account{ID: "apikey_01gtgztp8f4kek3yd4g1wrksa4", Livemode: true}, nil},
		{"key from before May 2025", providertest.OK, "0123456789abcdef0123456789abcdef0123456789abcdef01", providers.Account{Livemode: true}, nil},
		{"unknown key", providertest.OK, "pdl_sdbx_apikey_01other_x", providers.Account{}, providers.ErrTokenRefused},
		{"401", providertest.TokenRefused, testKey, providers.Account{}, providers.ErrTokenRefused},
		{"403", providertest.PermissionDenied, testKey, providers.Account{}, providers.ErrPermissionDenied},
		{"404", providertest.NotFound, testKey, providers.Account{}, providers.ErrUnavailable},
		{"500", providertest.ServerError, testKey, providers.Account{}, providers.ErrUnavailable},
		{"hang", providertest.Hang, testKey, providers.Account{}, providers.ErrUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			accepted := tt.key
			if tt.wantErr == providers.ErrTokenRefused && tt.outcome == providertest.OK {
				accepted = testKey
			}
			fake := providertest.NewPaddle(t, accepted)
			fake.SetOutcome(tt.outcome)
			acct, err := paddle.New(fake.URL(), shortTimeout).Account(t.Context(), tt.key)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Account() error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), tt.key) {
					t.Errorf("Account() error %q carries the key", err)
				}
				return
			}
			if *acct != tt.want {
				t.Errorf("Account() = %+v, want %+v", acct, tt.want)
			}
		})
	}
}

func TestAccountNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := paddle.New(url, shortTimeout).Account(t.Context(), testKey)
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
		{"ok", providertest.OK, "pro_known", nil},
		{"unknown product", providertest.OK, "pro_unknown", providers.ErrNoSuchProduct},
		{"401", providertest.TokenRefused, "pro_known", providers.ErrTokenRefused},
		{"403", providertest.PermissionDenied, "pro_known", providers.ErrPermissionDenied},
		{"404", providertest.NotFound, "pro_known", providers.ErrNoSuchProduct},
		{"500", providertest.ServerError, "pro_known", providers.ErrUnavailable},
		{"hang", providertest.Hang, "pro_known", providers.ErrUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := providertest.NewPaddle(t, testKey)
			fake.AddProduct("pro_known")
			fake.SetOutcome(tt.outcome)
			err := paddle.New(fake.URL(), shortTimeout).Product(t.Context(), testKey, tt.product)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Product() error = %v, want %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Errorf("Product() error %q carries the key", err)
			}
		})
	}
}

package lemonsqueezy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/providertest"
)

const testKey = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.secret"

// shortTimeout stands in for providers.Timeout so a hanging fake ends fast.
const shortTimeout = 200 * time.Millisecond

func TestAccount(t *testing.T) {
	for _, tt := range []struct {
		name     string
		outcome  providertest.Outcome
		key      string
		testMode bool
		wantErr  error
	}{
		{"test mode", providertest.OK, testKey, true, nil},
		{"live mode", providertest.OK, testKey, false, nil},
		{"unknown key", providertest.OK, "other", true, providers.ErrTokenRefused},
		{"401", providertest.TokenRefused, testKey, true, providers.ErrTokenRefused},
		{"403", providertest.PermissionDenied, testKey, true, providers.ErrPermissionDenied},
		{"404", providertest.NotFound, testKey, true, providers.ErrUnavailable},
		{"500", providertest.ServerError, testKey, true, providers.ErrUnavailable},
		{"hang", providertest.Hang, testKey, true, providers.ErrUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := providertest.NewLemonSqueezy(t, testKey)
			fake.TestMode = tt.testMode
			fake.SetOutcome(tt.outcome)
			acct, err := lemonsqueezy.New(fake.URL(), shortTimeout).Account(t.Context(), tt.key)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Account() error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), tt.key) {
					t.Errorf("Account() error %q carries the key", err)
				}
				return
			}
			if acct.ID != fake.UserID || acct.Livemode == tt.testMode {
				t.Errorf("Account() = %+v, want {%s %v}", acct, fake.UserID, !tt.testMode)
			}
		})
	}
}

func TestAccountNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := lemonsqueezy.New(url, shortTimeout).Account(t.Context(), testKey)
	if !errors.Is(err, providers.ErrUnavailable) || strings.Contains(err.Error(), testKey) {
		t.Errorf("Account() error = %v, want ErrUnavailable without the key", err)
	}
}

func TestProduct(t *testing.T) {
	for _, tt := range []struct {
		name    string
		outcome providertest.Outcome
		variant string
		wantErr error
	}{
		{"ok", providertest.OK, "42", nil},
		{"unknown variant", providertest.OK, "43", providers.ErrNoSuchProduct},
		{"401", providertest.TokenRefused, "42", providers.ErrTokenRefused},
		{"403", providertest.PermissionDenied, "42", providers.ErrPermissionDenied},
		{"404", providertest.NotFound, "42", providers.ErrNoSuchProduct},
		{"500", providertest.ServerError, "42", providers.ErrUnavailable},
		{"hang", providertest.Hang, "42", providers.ErrUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := providertest.NewLemonSqueezy(t, testKey)
			fake.AddVariant("42", false)
			fake.SetOutcome(tt.outcome)
			err := lemonsqueezy.New(fake.URL(), shortTimeout).Product(t.Context(), testKey, tt.variant)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Product() error = %v, want %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Errorf("Product() error %q carries the key", err)
			}
		})
	}
}

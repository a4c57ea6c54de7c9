package providers_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/providers"
)

// TestAPIGetErrorsNameNoQuery: a failed call's error, which is logged,
// names the path but not its query, where an order id may stand, nor the
// key.
func TestAPIGetErrorsNameNoQuery(t *testing.T) {
	const key, orderID = "key_api_test", "order-4711"
	path := "/v1/subscriptions?filter%5Border_id%5D=" + orderID
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer failing.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for name, base := range map[string]string{"server error": failing.URL, "network error": closed.URL} {
		t.Run(name, func(t *testing.T) {
			api := providers.API{BaseURL: base, HTTP: &http.Client{Timeout: time.Second}}
			var into any
			err := api.Get(t.Context(), key, path, nil, &into)
			if !errors.Is(err, providers.ErrUnavailable) {
				t.Fatalf("Get() error = %v, want ErrUnavailable", err)
			}
			if msg := err.Error(); strings.Contains(msg, orderID) || strings.Contains(msg, key) || !strings.Contains(msg, "/v1/subscriptions") {
				t.Errorf("Get() error = %q, want the path without its query or the key", msg)
			}
		})
	}
}

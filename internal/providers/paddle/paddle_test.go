package paddle_test

import (
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

func newClient(url string, timeout time.Duration) providers.Client { return paddle.New(url, timeout) }

func TestClient(t *testing.T) {
	providertest.RunClient(t, providertest.ClientCase[*providertest.Paddle]{
		Key: testKey, OtherKey: "pdl_sdbx_apikey_01other_x",
		Product: "pro_known", OtherProduct: "pro_unknown",
		NewFake: func(t testing.TB) *providertest.Paddle {
			fake := providertest.NewPaddle(t, testKey)
			fake.AddProduct("pro_known")
			return fake
		},
		NewClient: newClient,
		Account: func(*providertest.Paddle) providers.Account {
			return providers.Account{ID: "apikey_01gtgztp8f4kek3yd4g1wrksa3"}
		},
	})
}

// TestAccountFromKey checks that the account is named, and its mode read,
// from the key itself: Paddle has no account endpoint.
func TestAccountFromKey(t *testing.T) {
	for _, tt := range []struct {
		name string
		key  string
		want providers.Account
	}{
		{"live key", liveKey, providers.Account{ID: "apikey_01gtgztp8f4kek3yd4g1wrksa4", Livemode: true}},
		{"key from before May 2025", "0123456789abcdef0123456789abcdef0123456789abcdef01", providers.Account{Livemode: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := providertest.NewPaddle(t, tt.key)
			acct, err := paddle.New(fake.URL(), shortTimeout).Account(t.Context(), tt.key)
			if err != nil {
				t.Fatal(err)
			}
			if *acct != tt.want {
				t.Errorf("Account() = %+v, want %+v", acct, tt.want)
			}
		})
	}
}

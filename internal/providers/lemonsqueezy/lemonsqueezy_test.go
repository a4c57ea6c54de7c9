package lemonsqueezy_test

import (
	"testing"
	"time"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/providertest"
)

const testKey = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.secret"

// shortTimeout stands in for providers.Timeout so a hanging fake ends fast.
const shortTimeout = 200 * time.Millisecond

func TestClient(t *testing.T) {
	providertest.RunClient(t, providertest.ClientCase[*providertest.LemonSqueezy]{
		Key: testKey, OtherKey: "other",
		Product: "42", OtherProduct: "43",
		NewFake: func(t testing.TB) *providertest.LemonSqueezy {
			fake := providertest.NewLemonSqueezy(t, testKey)
			fake.TestMode = true
			fake.AddVariant("42", false)
			return fake
		},
		NewClient: func(url string, timeout time.Duration) providers.Client { return lemonsqueezy.New(url, timeout) },
		Account: func(fake *providertest.LemonSqueezy) providers.Account {
			return providers.Account{ID: fake.UserID}
		},
	})
}

// TestAccountLiveMode checks that an account whose key is not in test mode
// is live: Lemon Squeezy says so in the user's meta, not in the key.
func TestAccountLiveMode(t *testing.T) {
	fake := providertest.NewLemonSqueezy(t, testKey)
	fake.TestMode = false
	acct, err := lemonsqueezy.New(fake.URL(), shortTimeout).Account(t.Context(), testKey)
	if err != nil {
		t.Fatal(err)
	}
	if want := (providers.Account{ID: fake.UserID, Livemode: true}); *acct != want {
		t.Errorf("Account() = %+v, want %+v", acct, want)
	}
}

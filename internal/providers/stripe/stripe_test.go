package stripe_test

import (
	"testing"
	"time"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
)

const testKey = "sk_test_51Secret"

// shortTimeout stands in for providers.Timeout so a hanging fake ends fast.
const shortTimeout = 200 * time.Millisecond

func TestClient(t *testing.T) {
	providertest.RunClient(t, providertest.ClientCase[*providertest.Stripe]{
		Key: testKey, OtherKey: "sk_test_other",
		Product: "prod_Known", OtherProduct: "prod_Unknown",
		NewFake: func(t testing.TB) *providertest.Stripe {
			fake := providertest.NewStripe(t, testKey)
			fake.AddProduct("prod_Known")
			return fake
		},
		NewClient: func(url string, timeout time.Duration) providers.Client { return stripe.New(url, timeout) },
		Account:   func(fake *providertest.Stripe) providers.Account { return providers.Account{ID: fake.AccountID} },
	})
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

package stripe_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
)

// maxFuzzBody matches the webhook route's 64 KB body limit.
const maxFuzzBody = 64 << 10

func FuzzVerify(f *testing.F) {
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_1", SessionID: "cs_1"}, now)
	f.Add(body, providertest.StripeSignature(body, secret, now))
	f.Add([]byte("{}"), "t=1,v1=00")
	f.Add([]byte(""), "t=,v1=,v0=zz,,==")
	c := stripe.New("", shortTimeout)
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		if len(body) > maxFuzzBody || len(sig) > 4096 {
			return
		}
		err := c.Verify(http.Header{"Stripe-Signature": {sig}}, body, secret, now)
		if err != nil && !errors.Is(err, providers.ErrSignatureInvalid) {
			t.Fatalf("Verify() = %v, want nil or ErrSignatureInvalid", err)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add(providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_1", SessionID: "cs_1", PaymentIntent: "pi_1"}, now))
	f.Add(providertest.StripeChargeRefundedEvent("evt_2", "ch_1", "pi_1", 100, 100, now))
	f.Add(providertest.StripeSubscriptionEvent("evt_3", "customer.subscription.updated", "sub_1", "active", "trialing", nil, now))
	f.Add([]byte(`{"id":"evt_4","type":"customer.subscription.deleted","data":{"object":{"id":1}}}`))
	fake := providertest.NewStripe(f, testKey)
	fake.AddCheckout("cs_1", providers.Item{ProductID: "prod_A", Quantity: 1})
	c := stripe.New(fake.URL(), shortTimeout)
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > maxFuzzBody {
			return
		}
		ev, err := c.Parse(t.Context(), body, testKey)
		if err != nil {
			if !errors.Is(err, providers.ErrEventMalformed) && !errors.Is(err, providers.ErrUnavailable) {
				t.Fatalf("Parse() error = %v, want ErrEventMalformed or ErrUnavailable", err)
			}
			return
		}
		if ev.ID == "" || ev.Kind == "" {
			t.Fatalf("Parse() = %+v: an event needs an id and a kind", ev)
		}
	})
}

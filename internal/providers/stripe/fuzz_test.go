package stripe_test

import (
	"testing"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
)

func FuzzVerify(f *testing.F) {
	providertest.FuzzVerify(f, verifyCase(), "t=1,v1=00", "t=,v1=,v0=zz,,==")
}

func FuzzParse(f *testing.F) {
	fake := providertest.NewStripe(f, testKey)
	fake.AddCheckout("cs_1", providers.Item{ProductID: "prod_A", Quantity: 1})
	providertest.FuzzParse(f, stripe.New(fake.URL(), shortTimeout), testKey,
		providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_1", SessionID: "cs_1", PaymentIntent: "pi_1"}, now),
		providertest.StripeChargeRefundedEvent("evt_2", "ch_1", "pi_1", 100, 100, now),
		providertest.StripeSubscriptionEvent("evt_3", "customer.subscription.updated", "sub_1", "active", "trialing", nil, now),
		[]byte(`{"id":"evt_4","type":"customer.subscription.deleted","data":{"object":{"id":1}}}`),
	)
}

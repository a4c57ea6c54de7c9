package lemonsqueezy_test

import (
	"testing"

	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/providertest"
)

func FuzzVerify(f *testing.F) {
	providertest.FuzzVerify(f, verifyCase(), "00", "")
}

func FuzzParse(f *testing.F) {
	fake := providertest.NewLemonSqueezy(f, testKey)
	fake.AddVariant("42", false)
	providertest.FuzzParse(f, lemonsqueezy.New(fake.URL(), shortTimeout), testKey,
		providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 1, VariantID: 42, Quantity: 1}),
		providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{Event: "order_refunded", OrderID: 1, VariantID: 42}),
		providertest.LemonSqueezySubscriptionEvent("subscription_updated", 1, 1, 42, "active", now),
		[]byte(`{"meta":{"event_name":"subscription_expired"},"data":{"id":"1","attributes":{"order_id":"x"}}}`),
	)
}

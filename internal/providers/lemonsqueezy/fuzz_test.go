package lemonsqueezy_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/providertest"
)

// maxFuzzBody matches the webhook route's 64 KB body limit.
const maxFuzzBody = 64 << 10

func FuzzVerify(f *testing.F) {
	body := providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 1, VariantID: 42})
	f.Add(body, providertest.LemonSqueezySignature(body, secret))
	f.Add([]byte("{}"), "00")
	f.Add([]byte(""), "")
	c := lemonsqueezy.New("", shortTimeout)
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		if len(body) > maxFuzzBody || len(sig) > 4096 {
			return
		}
		err := c.Verify(http.Header{"X-Signature": {sig}}, body, secret, now)
		if err != nil && !errors.Is(err, providers.ErrSignatureInvalid) {
			t.Fatalf("Verify() = %v, want nil or ErrSignatureInvalid", err)
		}
		if err == nil && sig != providertest.LemonSqueezySignature(body, secret) {
			t.Fatalf("Verify() accepted %q, not the body's signature", sig)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add(providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 1, VariantID: 42, Quantity: 1}))
	f.Add(providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{Event: "order_refunded", OrderID: 1, VariantID: 42}))
	f.Add(providertest.LemonSqueezySubscriptionEvent("subscription_updated", 1, 1, 42, "active", now))
	f.Add([]byte(`{"meta":{"event_name":"subscription_expired"},"data":{"id":"1","attributes":{"order_id":"x"}}}`))
	fake := providertest.NewLemonSqueezy(f, testKey)
	fake.AddVariant("42", false)
	c := lemonsqueezy.New(fake.URL(), shortTimeout)
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

package paddle_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
)

// maxFuzzBody matches the webhook route's 64 KB body limit.
const maxFuzzBody = 64 << 10

func FuzzVerify(f *testing.F) {
	body := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_1", TransactionID: "txn_1"}, now)
	f.Add(body, providertest.PaddleSignature(body, secret, now))
	f.Add([]byte("{}"), "ts=1;h1=00")
	f.Add([]byte(""), ";;ts=;h1=;=")
	c := paddle.New("", shortTimeout)
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		if len(body) > maxFuzzBody || len(sig) > 4096 {
			return
		}
		err := c.Verify(http.Header{"Paddle-Signature": {sig}}, body, secret, now)
		if err != nil && !errors.Is(err, providers.ErrSignatureInvalid) {
			t.Fatalf("Verify() = %v, want nil or ErrSignatureInvalid", err)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add(providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_1", TransactionID: "txn_1", CustomerID: "ctm_1"}, now))
	f.Add(providertest.PaddleAdjustmentEvent("evt_2", "adjustment.updated", "adj_1", "refund", "full", "approved", "txn_1", now))
	f.Add(providertest.PaddleSubscriptionEvent("evt_3", "subscription.activated", "sub_1", "active", nil, now))
	f.Add([]byte(`{"event_id":"evt_4","event_type":"subscription.canceled","data":{"id":"sub_1","items":[{"price":null}]}}`))
	fake := providertest.NewPaddle(f, testKey)
	fake.AddCustomer("ctm_1", "buyer@example.com")
	c := paddle.New(fake.URL(), shortTimeout)
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

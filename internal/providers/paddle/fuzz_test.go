package paddle_test

import (
	"testing"

	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
)

func FuzzVerify(f *testing.F) {
	providertest.FuzzVerify(f, verifyCase(), "ts=1;h1=00", ";;ts=;h1=;=")
}

func FuzzParse(f *testing.F) {
	fake := providertest.NewPaddle(f, testKey)
	fake.AddCustomer("ctm_1", "buyer@example.com")
	providertest.FuzzParse(f, paddle.New(fake.URL(), shortTimeout), testKey,
		providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_1", TransactionID: "txn_1", CustomerID: "ctm_1"}, now),
		providertest.PaddleAdjustmentEvent("evt_2", "adjustment.updated", "adj_1", "refund", "full", "approved", "txn_1", now),
		providertest.PaddleSubscriptionEvent("evt_3", "subscription.activated", "sub_1", "active", nil, now),
		[]byte(`{"event_id":"evt_4","event_type":"subscription.canceled","data":{"id":"sub_1","items":[{"price":null}]}}`),
	)
}

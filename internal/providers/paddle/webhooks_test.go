package paddle_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/paddle"
	"github.com/licentia/licentia/internal/providers/providertest"
)

const secret = "pdl_ntfset_01gt21c5pdx9q1e4mh1xrsjjn6_secret"

// now is the time the shared suite verifies at.
var now = providertest.VerifyNow

// verifyCase is Paddle's signature scheme, for the shared suite and the
// fuzz target.
func verifyCase() providertest.VerifyCase {
	body := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{EventID: "evt_1", TransactionID: "txn_1"}, now)
	_, goodH1, _ := strings.Cut(providertest.PaddleSignature(body, secret, now), ";")
	_, otherH1, _ := strings.Cut(providertest.PaddleSignature(body, "pdl_ntfset_old", now), ";")
	return providertest.VerifyCase{
		Verifier:    paddle.New("", shortTimeout),
		Header:      paddle.SignatureHeader,
		Secret:      secret,
		Body:        body,
		Sign:        providertest.PaddleSignature,
		NewRequest:  providertest.NewPaddleRequest,
		Timestamped: true,
		Accept: []providertest.Header{
			{Name: "rotating secrets", Value: fmt.Sprintf("ts=%d;%s;%s", now.Unix(), otherH1, goodH1)},
		},
		Refuse: []providertest.Header{
			{Name: "no timestamp", Value: goodH1},
			{Name: "no h1", Value: fmt.Sprintf("ts=%d", now.Unix())},
			{Name: "bad timestamp", Value: "ts=soon;" + goodH1},
			{Name: "signature not hex", Value: fmt.Sprintf("ts=%d;h1=zz", now.Unix())},
		},
	}
}

func TestVerify(t *testing.T) {
	providertest.RunVerify(t, verifyCase())
}

func TestParse(t *testing.T) {
	trialEnd := now.Add(14 * 24 * time.Hour)
	items := []providers.Item{{ProductID: "pro_a", Quantity: 2}, {ProductID: "pro_b", Quantity: 1}}
	for _, tt := range []struct {
		name string
		body []byte
		want *providers.Event
	}{
		{
			name: "one-time checkout",
			body: providertest.PaddleTransactionEvent(providertest.PaddleTransaction{
				EventID: "evt_paid", TransactionID: "txn_1", InvoiceNumber: "325-10566", CustomerID: "ctm_1", Items: items,
			}, now),
			want: &providers.Event{
				ID: "evt_paid", Type: "transaction.completed", Kind: providers.KindOrderPaid, OrderID: "txn_1", OrderNumber: "325-10566",
				CustomerID: "ctm_1", Email: "buyer@example.com", Items: items,
			},
		},
		{
			name: "trialing subscription checkout",
			body: providertest.PaddleTransactionEvent(providertest.PaddleTransaction{
				EventID: "evt_trial", TransactionID: "txn_2", CustomerID: "ctm_1", SubscriptionID: "sub_trial", Items: items[:1],
			}, now),
			want: &providers.Event{
				ID: "evt_trial", Type: "transaction.completed", Kind: providers.KindOrderPaid, OrderID: "txn_2",
				CustomerID: "ctm_1", SubscriptionID: "sub_trial", Email: "buyer@example.com", Items: items[:1],
				Subscription: true, TrialEndsAt: &trialEnd,
			},
		},
		{
			name: "paid subscription through the API",
			body: providertest.PaddleTransactionEvent(providertest.PaddleTransaction{
				EventID: "evt_sub", TransactionID: "txn_3", Origin: "api", CustomerID: "ctm_1", SubscriptionID: "sub_active", Items: items[:1],
			}, now),
			want: &providers.Event{
				ID: "evt_sub", Type: "transaction.completed", Kind: providers.KindOrderPaid, OrderID: "txn_3",
				CustomerID: "ctm_1", SubscriptionID: "sub_active", Email: "buyer@example.com", Items: items[:1], Subscription: true,
			},
		},
		{
			name: "renewal",
			body: providertest.PaddleTransactionEvent(providertest.PaddleTransaction{
				EventID: "evt_renew", TransactionID: "txn_4", Origin: "subscription_recurring", CustomerID: "ctm_1",
				SubscriptionID: "sub_active", Items: items[:1],
			}, now),
			want: &providers.Event{ID: "evt_renew", Type: "transaction.completed", Kind: providers.KindIgnored},
		},
		{
			name: "approved full refund",
			body: providertest.PaddleAdjustmentEvent("evt_adj", "adjustment.updated", "adj_1", "refund", "full", "approved", "txn_1", now),
			want: &providers.Event{
				ID: "evt_adj", Type: "adjustment.updated", Kind: providers.KindRefunded, OrderID: "txn_1", CustomerID: "ctm_1",
				FullRefund: true,
			},
		},
		{
			name: "approved partial refund",
			body: providertest.PaddleAdjustmentEvent("evt_adj2", "adjustment.created", "adj_2", "refund", "partial", "approved", "txn_1", now),
			want: &providers.Event{
				ID: "evt_adj2", Type: "adjustment.created", Kind: providers.KindRefunded, OrderID: "txn_1", CustomerID: "ctm_1",
			},
		},
		{
			name: "refund awaiting approval",
			body: providertest.PaddleAdjustmentEvent("evt_adj3", "adjustment.created", "adj_3", "refund", "full", "pending_approval", "txn_1", now),
			want: &providers.Event{ID: "evt_adj3", Type: "adjustment.created", Kind: providers.KindIgnored},
		},
		{
			name: "credit",
			body: providertest.PaddleAdjustmentEvent("evt_adj4", "adjustment.created", "adj_4", "credit", "full", "approved", "txn_1", now),
			want: &providers.Event{ID: "evt_adj4", Type: "adjustment.created", Kind: providers.KindIgnored},
		},
		{
			name: "subscription canceled",
			body: providertest.PaddleSubscriptionEvent("evt_cancel", "subscription.canceled", "sub_active", "canceled", items[:1], now),
			want: &providers.Event{
				ID: "evt_cancel", Type: "subscription.canceled", Kind: providers.KindSubscriptionEnded, SubscriptionID: "sub_active",
				CustomerID: "ctm_1", Items: items[:1], Subscription: true,
			},
		},
		{
			name: "subscription activated",
			body: providertest.PaddleSubscriptionEvent("evt_act", "subscription.activated", "sub_trial", "active", items[:1], now),
			want: &providers.Event{
				ID: "evt_act", Type: "subscription.activated", Kind: providers.KindTrialConverted, SubscriptionID: "sub_trial",
				CustomerID: "ctm_1", Items: items[:1], Subscription: true,
			},
		},
		{
			name: "unhandled type",
			body: providertest.PaddleSubscriptionEvent("evt_upd", "subscription.updated", "sub_trial", "active", nil, now),
			want: &providers.Event{ID: "evt_upd", Type: "subscription.updated", Kind: providers.KindIgnored},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := providertest.NewPaddle(t, testKey)
			fake.AddCustomer("ctm_1", "buyer@example.com")
			fake.AddSubscription("sub_trial", providertest.PaddleSubscription{Status: "trialing", TrialEnd: trialEnd})
			fake.AddSubscription("sub_active", providertest.PaddleSubscription{Status: "active"})
			got, err := paddle.New(fake.URL(), shortTimeout).Parse(t.Context(), tt.body, testKey)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseAPIFailure checks that any failure of a call a transaction needs
// is ErrUnavailable, so the route answers 503 and Paddle sends it again.
func TestParseAPIFailure(t *testing.T) {
	body := providertest.PaddleTransactionEvent(providertest.PaddleTransaction{
		EventID: "evt_1", TransactionID: "txn_1", CustomerID: "ctm_1", SubscriptionID: "sub_1",
		Items: []providers.Item{{ProductID: "pro_a", Quantity: 1}},
	}, now)
	for _, outcome := range []providertest.Outcome{
		providertest.TokenRefused, providertest.PermissionDenied, providertest.NotFound, providertest.ServerError, providertest.Hang,
	} {
		t.Run(fmt.Sprint(outcome), func(t *testing.T) {
			fake := providertest.NewPaddle(t, testKey)
			fake.SetOutcome(outcome)
			_, err := paddle.New(fake.URL(), shortTimeout).Parse(t.Context(), body, testKey)
			if !errors.Is(err, providers.ErrUnavailable) {
				t.Fatalf("Parse() error = %v, want ErrUnavailable", err)
			}
		})
	}
	t.Run("unknown subscription", func(t *testing.T) {
		fake := providertest.NewPaddle(t, testKey)
		fake.AddCustomer("ctm_1", "buyer@example.com")
		_, err := paddle.New(fake.URL(), shortTimeout).Parse(t.Context(), body, testKey)
		if !errors.Is(err, providers.ErrUnavailable) {
			t.Fatalf("Parse() error = %v, want ErrUnavailable", err)
		}
	})
}

func TestParseMalformed(t *testing.T) {
	for _, body := range []string{
		``, `[]`, `{"event_id":"evt_1"}`, `{"event_id":"evt_1","event_type":"transaction.completed","data":{}}`,
		`{"event_id":"evt_1","event_type":"adjustment.created","data":"x"}`,
		`{"event_id":"evt_1","event_type":"subscription.canceled","data":{"id":1}}`,
	} {
		_, err := paddle.New("", shortTimeout).Parse(t.Context(), []byte(body), testKey)
		if !errors.Is(err, providers.ErrEventMalformed) {
			t.Errorf("Parse(%q) error = %v, want ErrEventMalformed", body, err)
		}
	}
}

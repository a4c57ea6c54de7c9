package stripe_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
)

const secret = "whsec_test_secret"

// now is the time the shared suite verifies at.
var now = providertest.VerifyNow

// verifyCase is Stripe's signature scheme, for the shared suite and the
// fuzz target.
func verifyCase() providertest.VerifyCase {
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_1", SessionID: "cs_1"}, now)
	good := providertest.StripeSignature(body, secret, now)
	unsigned := good[len(fmt.Sprintf("t=%d,", now.Unix())):]
	return providertest.VerifyCase{
		Verifier:    stripe.New("", shortTimeout),
		Header:      stripe.SignatureHeader,
		Secret:      secret,
		Body:        body,
		Sign:        providertest.StripeSignature,
		NewRequest:  providertest.NewStripeRequest,
		Timestamped: true,
		Refuse: []providertest.Header{
			{Name: "no timestamp", Value: unsigned},
			{Name: "bad timestamp", Value: "t=soon," + unsigned},
		},
	}
}

func TestVerify(t *testing.T) {
	providertest.RunVerify(t, verifyCase())
}

func TestParse(t *testing.T) {
	trialEnd := now.Add(14 * 24 * time.Hour)
	items := []providers.Item{{ProductID: "prod_A", Quantity: 2}, {ProductID: "prod_B", Quantity: 1}}
	for _, tt := range []struct {
		name string
		body []byte
		want *providers.Event
	}{
		{
			name: "one-time checkout",
			body: providertest.StripeCheckoutEvent(providertest.StripeCheckout{
				EventID: "evt_paid", SessionID: "cs_paid", PaymentIntent: "pi_1", Customer: "cus_1", Email: "buyer@example.com",
			}, now),
			want: &providers.Event{
				ID: "evt_paid", Type: "checkout.session.completed", Kind: providers.KindOrderPaid,
				OrderID: "pi_1", CheckoutID: "cs_paid", CustomerID: "cus_1", Email: "buyer@example.com", Items: items,
			},
		},
		{
			name: "trialing subscription checkout",
			body: providertest.StripeCheckoutEvent(providertest.StripeCheckout{
				EventID: "evt_trial", SessionID: "cs_trial", Invoice: "in_1", Subscription: "sub_trial", Customer: "cus_1",
				Email: "buyer@example.com", PaymentStatus: "no_payment_required",
			}, now),
			want: &providers.Event{
				ID: "evt_trial", Type: "checkout.session.completed", Kind: providers.KindOrderPaid,
				OrderID: "in_1", CheckoutID: "cs_trial", CustomerID: "cus_1", SubscriptionID: "sub_trial",
				Email: "buyer@example.com", Items: items, Subscription: true, TrialEndsAt: &trialEnd,
			},
		},
		{
			name: "paid subscription checkout",
			body: providertest.StripeCheckoutEvent(providertest.StripeCheckout{
				EventID: "evt_sub", SessionID: "cs_sub", Invoice: "in_2", Subscription: "sub_active", Customer: "cus_1",
				Email: "buyer@example.com",
			}, now),
			want: &providers.Event{
				ID: "evt_sub", Type: "checkout.session.completed", Kind: providers.KindOrderPaid,
				OrderID: "in_2", CheckoutID: "cs_sub", CustomerID: "cus_1", SubscriptionID: "sub_active",
				Email: "buyer@example.com", Items: items, Subscription: true,
			},
		},
		{
			name: "checkout awaiting payment",
			body: providertest.StripeCheckoutEvent(providertest.StripeCheckout{
				EventID: "evt_unpaid", SessionID: "cs_paid", PaymentIntent: "pi_1", PaymentStatus: "unpaid",
			}, now),
			want: &providers.Event{ID: "evt_unpaid", Type: "checkout.session.completed", Kind: providers.KindIgnored},
		},
		{
			name: "async payment succeeded",
			body: providertest.StripeCheckoutEvent(providertest.StripeCheckout{
				EventID: "evt_async", SessionID: "cs_paid", PaymentIntent: "pi_1", Email: "buyer@example.com",
				Type: "checkout.session.async_payment_succeeded",
			}, now),
			want: &providers.Event{
				ID: "evt_async", Type: "checkout.session.async_payment_succeeded", Kind: providers.KindOrderPaid,
				OrderID: "pi_1", CheckoutID: "cs_paid", Email: "buyer@example.com", Items: items,
			},
		},
		{
			name: "full refund",
			body: providertest.StripeChargeRefundedEvent("evt_refund", "ch_1", "pi_1", 4900, 4900, now),
			want: &providers.Event{
				ID: "evt_refund", Type: "charge.refunded", Kind: providers.KindRefunded, OrderID: "pi_1",
				CustomerID: "cus_1Test", FullRefund: true,
			},
		},
		{
			name: "partial refund",
			body: providertest.StripeChargeRefundedEvent("evt_partial", "ch_1", "pi_1", 4900, 1000, now),
			want: &providers.Event{
				ID: "evt_partial", Type: "charge.refunded", Kind: providers.KindRefunded, OrderID: "pi_1",
				CustomerID: "cus_1Test",
			},
		},
		{
			name: "full refund of a subscription's payment",
			body: providertest.StripeChargeRefundedEvent("evt_subrefund", "ch_2", "pi_sub", 4900, 4900, now),
			want: &providers.Event{
				ID: "evt_subrefund", Type: "charge.refunded", Kind: providers.KindRefunded, OrderID: "in_2",
				CustomerID: "cus_1Test", FullRefund: true,
			},
		},
		{
			name: "subscription deleted",
			body: providertest.StripeSubscriptionEvent("evt_del", "customer.subscription.deleted", "sub_1", "canceled", "", items[:1], now),
			want: &providers.Event{
				ID: "evt_del", Type: "customer.subscription.deleted", Kind: providers.KindSubscriptionEnded,
				SubscriptionID: "sub_1", CustomerID: "cus_1Test", Subscription: true, Items: items[:1],
			},
		},
		{
			name: "trial converted",
			body: providertest.StripeSubscriptionEvent("evt_conv", "customer.subscription.updated", "sub_1", "active", "trialing", nil, now),
			want: &providers.Event{
				ID: "evt_conv", Type: "customer.subscription.updated", Kind: providers.KindTrialConverted,
				SubscriptionID: "sub_1", CustomerID: "cus_1Test", Subscription: true,
			},
		},
		{
			name: "other subscription update",
			body: providertest.StripeSubscriptionEvent("evt_upd", "customer.subscription.updated", "sub_1", "past_due", "active", nil, now),
			want: &providers.Event{
				ID: "evt_upd", Type: "customer.subscription.updated", Kind: providers.KindIgnored,
				SubscriptionID: "sub_1", CustomerID: "cus_1Test", Subscription: true,
			},
		},
		{
			name: "unhandled type",
			body: []byte(`{"id":"evt_x","object":"event","type":"invoice.paid","data":{"object":{"id":"in_1"}}}`),
			want: &providers.Event{ID: "evt_x", Type: "invoice.paid", Kind: providers.KindIgnored},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := providertest.NewStripe(t, testKey)
			for _, cs := range []string{"cs_paid", "cs_trial", "cs_sub"} {
				fake.AddCheckout(cs, items...)
			}
			fake.AddSubscription("sub_trial", providertest.StripeSubscription{Status: "trialing", TrialEnd: trialEnd})
			fake.AddSubscription("sub_active", providertest.StripeSubscription{Status: "active"})
			fake.AddInvoicePayment("pi_sub", "in_2")
			got, err := stripe.New(fake.URL(), shortTimeout).Parse(t.Context(), tt.body, testKey)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseLineItemsPages checks that every line item is read, past Stripe's
// largest page of 100.
func TestParseLineItemsPages(t *testing.T) {
	fake := providertest.NewStripe(t, testKey)
	var items []providers.Item
	for i := range 105 {
		items = append(items, providers.Item{ProductID: fmt.Sprintf("prod_%d", i), Quantity: 1})
	}
	fake.AddCheckout("cs_big", items...)
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_big", SessionID: "cs_big", PaymentIntent: "pi_1"}, now)
	got, err := stripe.New(fake.URL(), shortTimeout).Parse(t.Context(), body, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(items, got.Items); diff != "" {
		t.Errorf("Parse() items mismatch (-want +got):\n%s", diff)
	}
}

// TestParseAPIFailure checks that any failure of a call an event needs is
// ErrUnavailable, so the route answers 503 and Stripe sends it again.
func TestParseAPIFailure(t *testing.T) {
	for _, outcome := range []providertest.Outcome{
		providertest.TokenRefused, providertest.PermissionDenied, providertest.NotFound, providertest.ServerError, providertest.Hang,
	} {
		t.Run(fmt.Sprint(outcome), func(t *testing.T) {
			fake := providertest.NewStripe(t, testKey)
			fake.AddCheckout("cs_1", providers.Item{ProductID: "prod_A", Quantity: 1})
			fake.SetOutcome(outcome)
			body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_1", SessionID: "cs_1", PaymentIntent: "pi_1"}, now)
			_, err := stripe.New(fake.URL(), shortTimeout).Parse(t.Context(), body, testKey)
			if !errors.Is(err, providers.ErrUnavailable) {
				t.Fatalf("Parse() error = %v, want ErrUnavailable", err)
			}
			if strings.Contains(err.Error(), "cs_1") {
				t.Errorf("Parse() error = %v, names the checkout", err)
			}
		})
	}
	for _, outcome := range []providertest.Outcome{
		providertest.TokenRefused, providertest.PermissionDenied, providertest.NotFound, providertest.ServerError, providertest.Hang,
	} {
		t.Run("refund "+outcome.String(), func(t *testing.T) {
			fake := providertest.NewStripe(t, testKey)
			fake.AddInvoicePayment("pi_sub", "in_1")
			fake.SetOutcome(outcome)
			body := providertest.StripeChargeRefundedEvent("evt_1", "ch_1", "pi_sub", 4900, 4900, now)
			_, err := stripe.New(fake.URL(), shortTimeout).Parse(t.Context(), body, testKey)
			if !errors.Is(err, providers.ErrUnavailable) {
				t.Fatalf("Parse() error = %v, want ErrUnavailable", err)
			}
			// The error is logged: it names no order.
			if strings.Contains(err.Error(), "pi_sub") {
				t.Errorf("Parse() error = %v, names the order", err)
			}
		})
	}
	t.Run("subscription", func(t *testing.T) {
		fake := providertest.NewStripe(t, testKey)
		fake.AddCheckout("cs_1", providers.Item{ProductID: "prod_A", Quantity: 1})
		body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_1", SessionID: "cs_1", Invoice: "in_1", Subscription: "sub_unknown"}, now)
		_, err := stripe.New(fake.URL(), shortTimeout).Parse(t.Context(), body, testKey)
		if !errors.Is(err, providers.ErrUnavailable) {
			t.Fatalf("Parse() error = %v, want ErrUnavailable", err)
		}
	})
}

func TestParseMalformed(t *testing.T) {
	for _, body := range []string{
		``, `[]`, `{"id":"evt_1"}`, `{"id":"evt_1","type":"charge.refunded","data":{"object":"x"}}`,
		`{"id":"evt_1","type":"charge.refunded","data":{"object":{}}}`,
	} {
		_, err := stripe.New("", shortTimeout).Parse(t.Context(), []byte(body), testKey)
		if !errors.Is(err, providers.ErrEventMalformed) {
			t.Errorf("Parse(%q) error = %v, want ErrEventMalformed", body, err)
		}
	}
}

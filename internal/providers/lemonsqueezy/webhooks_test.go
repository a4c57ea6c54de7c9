package lemonsqueezy_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/lemonsqueezy"
	"github.com/licentia/licentia/internal/providers/providertest"
)

const secret = "ls_signing_secret"

// now is the time the shared suite verifies at.
var now = providertest.VerifyNow

// verifyCase is Lemon Squeezy's signature scheme, for the shared suite and
// the fuzz target. It signs no timestamp.
func verifyCase() providertest.VerifyCase {
	body := providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 1, VariantID: 42})
	good := providertest.LemonSqueezySignature(body, secret)
	return providertest.VerifyCase{
		Verifier: lemonsqueezy.New("", shortTimeout),
		Header:   lemonsqueezy.SignatureHeader,
		Secret:   secret,
		Body:     body,
		Sign: func(body []byte, secret string, _ time.Time) string {
			return providertest.LemonSqueezySignature(body, secret)
		},
		NewRequest: func(ctx context.Context, url, secret string, _ time.Time, body []byte) (*http.Request, error) {
			return providertest.NewLemonSqueezyRequest(ctx, url, secret, "order_created", body)
		},
		Refuse: []providertest.Header{
			{Name: "not hex", Value: "zz" + good[2:]},
			{Name: "truncated", Value: good[:32]},
		},
	}
}

func TestVerify(t *testing.T) {
	providertest.RunVerify(t, verifyCase())
}

// TestRequestFromSenderNamesEvent checks that the sender names the event in
// X-Event-Name, as Lemon Squeezy does.
func TestRequestFromSenderNamesEvent(t *testing.T) {
	body := providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 1, VariantID: 42})
	req, err := providertest.NewLemonSqueezyRequest(t.Context(), "http://127.0.0.1/hook", secret, "order_created", body)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("X-Event-Name") != "order_created" {
		t.Errorf("X-Event-Name = %q, want order_created", req.Header.Get("X-Event-Name"))
	}
}

func TestParse(t *testing.T) {
	trialEnd := now.Add(14 * 24 * time.Hour)
	refundedAt := now.Add(time.Hour)
	for _, tt := range []struct {
		name string
		body []byte
		want *providers.Event
	}{
		{
			name: "one-time order",
			body: providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{
				OrderID: 100, OrderNumber: 1001, Identifier: "uuid-100", CustomerID: 7, Email: "buyer@example.com", VariantID: 42,
				Quantity: 3, Total: 4900,
			}),
			want: &providers.Event{
				ID: "order_created:100", Type: "order_created", Kind: providers.KindOrderPaid, OrderID: "100", OrderNumber: "1001",
				CheckoutID: "uuid-100", CustomerID: "7", Email: "buyer@example.com", Items: []providers.Item{{ProductID: "42", Quantity: 3}},
			},
		},
		{
			name: "trialing subscription order",
			body: providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{
				OrderID: 101, Identifier: "uuid-101", CustomerID: 7, Email: "buyer@example.com", VariantID: 50, Quantity: 1,
			}),
			want: &providers.Event{
				ID: "order_created:101", Type: "order_created", Kind: providers.KindOrderPaid, OrderID: "101", OrderNumber: "101", CheckoutID: "uuid-101",
				CustomerID: "7", SubscriptionID: "9001", Email: "buyer@example.com", Items: []providers.Item{{ProductID: "50", Quantity: 1}},
				Subscription: true, TrialEndsAt: &trialEnd,
			},
		},
		{
			name: "active subscription order",
			body: providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{
				OrderID: 102, Identifier: "uuid-102", CustomerID: 7, Email: "buyer@example.com", VariantID: 50, Quantity: 1, Total: 900,
			}),
			want: &providers.Event{
				ID: "order_created:102", Type: "order_created", Kind: providers.KindOrderPaid, OrderID: "102", OrderNumber: "102", CheckoutID: "uuid-102",
				CustomerID: "7", SubscriptionID: "9002", Email: "buyer@example.com", Items: []providers.Item{{ProductID: "50", Quantity: 1}},
				Subscription: true,
			},
		},
		{
			name: "pending order",
			body: providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 103, VariantID: 42, Status: "pending"}),
			want: &providers.Event{ID: "order_created:103", Type: "order_created", Kind: providers.KindIgnored},
		},
		{
			name: "full refund",
			body: providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{
				Event: "order_refunded", OrderID: 100, Identifier: "uuid-100", CustomerID: 7, VariantID: 42, Status: "refunded",
				Total: 4900, RefundedAmount: 4900, RefundedAt: refundedAt,
			}),
			want: &providers.Event{
				ID: "order_refunded:100:2026-11-26T13:00:00.000000Z", Type: "order_refunded", Kind: providers.KindRefunded,
				OrderID: "100", CheckoutID: "uuid-100", CustomerID: "7", FullRefund: true,
			},
		},
		{
			name: "partial refund",
			body: providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{
				Event: "order_refunded", OrderID: 100, Identifier: "uuid-100", CustomerID: 7, VariantID: 42, Status: "partial_refund",
				Total: 4900, RefundedAmount: 1000, RefundedAt: refundedAt,
			}),
			want: &providers.Event{
				ID: "order_refunded:100:2026-11-26T13:00:00.000000Z", Type: "order_refunded", Kind: providers.KindRefunded,
				OrderID: "100", CheckoutID: "uuid-100", CustomerID: "7",
			},
		},
		{
			name: "subscription expired",
			body: providertest.LemonSqueezySubscriptionEvent("subscription_expired", 9002, 102, 50, "expired", now),
			want: &providers.Event{
				ID: "subscription_expired:9002:2026-11-26T12:00:00.000000Z", Type: "subscription_expired",
				Kind: providers.KindSubscriptionEnded, OrderID: "102", CustomerID: "7", SubscriptionID: "9002",
				Email: "buyer@example.com", Items: []providers.Item{{ProductID: "50", Quantity: 1}}, Subscription: true,
			},
		},
		{
			name: "subscription active again",
			body: providertest.LemonSqueezySubscriptionEvent("subscription_updated", 9001, 101, 50, "active", now),
			want: &providers.Event{
				ID: "subscription_updated:9001:2026-11-26T12:00:00.000000Z", Type: "subscription_updated",
				Kind: providers.KindTrialConverted, OrderID: "101", CustomerID: "7", SubscriptionID: "9001",
				Email: "buyer@example.com", Items: []providers.Item{{ProductID: "50", Quantity: 1}}, Subscription: true,
			},
		},
		{
			name: "subscription past due",
			body: providertest.LemonSqueezySubscriptionEvent("subscription_updated", 9001, 101, 50, "past_due", now),
			want: &providers.Event{
				ID: "subscription_updated:9001:2026-11-26T12:00:00.000000Z", Type: "subscription_updated",
				Kind: providers.KindIgnored, OrderID: "101", CustomerID: "7", SubscriptionID: "9001",
				Email: "buyer@example.com", Items: []providers.Item{{ProductID: "50", Quantity: 1}}, Subscription: true,
			},
		},
		{
			name: "subscription cancelled, not yet ended",
			body: providertest.LemonSqueezySubscriptionEvent("subscription_cancelled", 9001, 101, 50, "cancelled", now),
			want: &providers.Event{ID: "subscription_cancelled:9001", Type: "subscription_cancelled", Kind: providers.KindIgnored},
		},
		{
			name: "unhandled type",
			body: []byte(`{"meta":{"event_name":"license_key_created"},"data":{"type":"license-keys","id":"5","attributes":{}}}`),
			want: &providers.Event{ID: "license_key_created:5", Type: "license_key_created", Kind: providers.KindIgnored},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := providertest.NewLemonSqueezy(t, testKey)
			fake.AddVariant("42", false)
			fake.AddVariant("50", true)
			fake.AddSubscription("101", providertest.LemonSqueezySubscription{ID: "9001", Status: "on_trial", TrialEndsAt: trialEnd})
			fake.AddSubscription("102", providertest.LemonSqueezySubscription{ID: "9002", Status: "active"})
			got, err := lemonsqueezy.New(fake.URL(), shortTimeout).Parse(t.Context(), tt.body, testKey)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseAPIFailure checks that any failure of a call an order needs is
// ErrUnavailable, so the route answers 503 and Lemon Squeezy sends again.
func TestParseAPIFailure(t *testing.T) {
	body := providertest.LemonSqueezyOrderEvent(providertest.LemonSqueezyOrder{OrderID: 101, VariantID: 50, Quantity: 1})
	for _, outcome := range []providertest.Outcome{
		providertest.TokenRefused, providertest.PermissionDenied, providertest.NotFound, providertest.ServerError, providertest.Hang,
	} {
		t.Run(fmt.Sprint(outcome), func(t *testing.T) {
			fake := providertest.NewLemonSqueezy(t, testKey)
			fake.SetOutcome(outcome)
			_, err := lemonsqueezy.New(fake.URL(), shortTimeout).Parse(t.Context(), body, testKey)
			if !errors.Is(err, providers.ErrUnavailable) {
				t.Fatalf("Parse() error = %v, want ErrUnavailable", err)
			}
		})
	}
	t.Run("subscription not listed yet", func(t *testing.T) {
		fake := providertest.NewLemonSqueezy(t, testKey)
		fake.AddVariant("50", true)
		_, err := lemonsqueezy.New(fake.URL(), shortTimeout).Parse(t.Context(), body, testKey)
		if !errors.Is(err, providers.ErrUnavailable) {
			t.Fatalf("Parse() error = %v, want ErrUnavailable", err)
		}
	})
}

func TestParseMalformed(t *testing.T) {
	for _, body := range []string{
		``, `[]`, `{"meta":{}}`, `{"meta":{"event_name":"order_created"},"data":{"id":"1","attributes":{}}}`,
		`{"meta":{"event_name":"order_refunded"},"data":{"id":"1","attributes":{"total":"x"}}}`,
		`{"meta":{"event_name":"subscription_expired"},"data":{"id":"1","attributes":[]}}`,
	} {
		_, err := lemonsqueezy.New("", shortTimeout).Parse(t.Context(), []byte(body), testKey)
		if !errors.Is(err, providers.ErrEventMalformed) {
			t.Errorf("Parse(%q) error = %v, want ErrEventMalformed", body, err)
		}
	}
}

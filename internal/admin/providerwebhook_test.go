package admin_test

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/providers/stripe"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/storetest"
)

const (
	webhookKey    = "sk_test_51AdminWebhookTestsOnly"
	webhookSecret = "whsec_AdminWebhookTestsOnly"
)

// webhookFixture is an organization with product app and a Stripe
// integration whose product prod_app is mapped to it, served by a Service
// whose Stripe adapter calls a loopback fake.
type webhookFixture struct {
	st    store.Store
	clk   *clock.Fake
	svc   *admin.Service
	org   *licentia.Organization
	shop  *providertest.Stripe
	keys  *signing.Keyring
	integ string
	// metrics count the service's provider events.
	metrics *metrics.Metrics
}

func newWebhookFixture(t *testing.T, st store.Store) *webhookFixture {
	t.Helper()
	ctx := t.Context()
	raw := make([]byte, signing.MasterKeySize)
	rand.Read(raw)
	m, err := signing.NewMasterKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	f := &webhookFixture{st: st, clk: clock.NewFake(start), shop: providertest.NewStripe(t, webhookKey), keys: signing.NewKeyring(m),
		metrics: metrics.New(metrics.Options{})}
	f.shop.AddProduct("prod_app")
	f.svc = f.service(st)
	f.org, err = f.svc.CreateOrganization(ctx, licentia.OperatorActor, admin.NewOrganization{
		Name: "Shop", Slug: "shop", Plan: licentia.PlanBusiness, OwnerEmail: "owner@shop.example"})
	if err != nil {
		t.Fatal(err)
	}
	id, name, prefix, major := "app", "App", "APP", int64(1)
	if _, err := f.svc.CreateProduct(ctx, licentia.OperatorActor, f.org.ID, admin.NewProduct{ID: &id, Name: &name, KeyPrefix: &prefix, CurrentMajor: &major}); err != nil {
		t.Fatal(err)
	}
	v, err := f.svc.ConnectIntegration(ctx, licentia.OperatorActor, f.org.ID, admin.ConnectIntegration{Provider: "stripe", Name: "Shop",
		APIKey: webhookKey, WebhookSecret: webhookSecret})
	if err != nil {
		t.Fatal(err)
	}
	f.integ = v.Integration.ID
	if _, err := f.svc.PutMapping(ctx, licentia.OperatorActor, f.org.ID, f.integ, "prod_app", admin.PutMapping{ProductID: str("app")}); err != nil {
		t.Fatal(err)
	}
	return f
}

// service is the fixture's Service over st.
func (f *webhookFixture) service(st store.Store) *admin.Service {
	return admin.New(admin.Options{Store: st, Clock: f.clk, Plans: licentia.DefaultPlans(), Keys: f.keys,
		BaseURL: hookBaseURL, Logger: slog.New(slog.DiscardHandler), Metrics: f.metrics,
		Providers: map[providers.Name]providers.Provider{providers.Stripe: stripe.New(f.shop.URL(), 2*time.Second)}})
}

// paid is a signed checkout.session.completed of one prod_app × quantity.
func (f *webhookFixture) paid(eventID string) admin.ProviderWebhook {
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: eventID, SessionID: "cs_admin_1",
		PaymentIntent: "pi_admin_1", Customer: "cus_admin_1", Email: "buyer@example.com"}, f.clk.Now())
	return admin.ProviderWebhook{IntegrationID: f.integ, Body: body,
		Header: http.Header{"Stripe-Signature": {providertest.StripeSignature(body, webhookSecret, f.clk.Now())}}}
}

func (f *webhookFixture) licences(t *testing.T) []licentia.Licence {
	t.Helper()
	ls, err := f.st.FindLicences(t.Context(), f.org.ID, store.LicenceFilter{ProductID: str("app"), Limit: 100}, f.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// TestHandleProviderWebhook, on both engines: a paid checkout issues its
// licence once however often it is sent; a failing line-items call
// answers service_unavailable and writes nothing, not even the event id;
// a bad signature and an unknown integration answer alike.
func TestHandleProviderWebhook(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newWebhookFixture(t, st)
		f.shop.AddCheckout("cs_admin_1", providers.Item{ProductID: "prod_app", Quantity: 2})
		w := f.paid("evt_admin_1")

		f.shop.SetOutcome(providertest.ServerError)
		_, err := f.svc.HandleProviderWebhook(t.Context(), w)
		wantCode(t, "HandleProviderWebhook(line items fail)", err, licentia.CodeServiceUnavailable)
		if got := len(f.licences(t)); got != 0 {
			t.Fatalf("licences after a failed line-items call = %d, want 0", got)
		}
		f.shop.SetOutcome(providertest.OK)

		res, err := f.svc.HandleProviderWebhook(t.Context(), w)
		if err != nil {
			t.Fatalf("HandleProviderWebhook() error = %v", err)
		}
		if res.Issued != 1 || res.Repeated || res.Kind != providers.KindOrderPaid {
			t.Errorf("result = %+v, want one issued, not repeated", res)
		}
		res, err = f.svc.HandleProviderWebhook(t.Context(), w)
		if err != nil || !res.Repeated || res.Issued != 0 {
			t.Errorf("repeat: result %+v, error %v; want repeated, nothing issued", res, err)
		}
		ls := f.licences(t)
		if len(ls) != 1 || ls[0].LimitCount != 2 || ls[0].Source != licentia.SourceProvider {
			t.Errorf("licences = %+v, want one of 2 seats from the provider", ls)
		}

		bad := w
		bad.Header = http.Header{"Stripe-Signature": {providertest.StripeSignature(w.Body, "whsec_other", f.clk.Now())}}
		_, errBad := f.svc.HandleProviderWebhook(t.Context(), bad)
		unknown := w
		unknown.IntegrationID = licentia.NewID()
		_, errUnknown := f.svc.HandleProviderWebhook(t.Context(), unknown)
		for _, err := range []error{errBad, errUnknown} {
			e := wantCode(t, "HandleProviderWebhook(refused)", err, licentia.CodeWebhookSignatureInvalid)
			if e != nil && e.Message != "The webhook signature is missing or invalid." {
				t.Errorf("message = %q", e.Message)
			}
		}
	})
}

// TestHandleProviderWebhookRace, on both engines: deliveries of one event
// racing each other issue one licence; each answers without error.
func TestHandleProviderWebhookRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newWebhookFixture(t, st)
		f.shop.AddCheckout("cs_admin_1", providers.Item{ProductID: "prod_app", Quantity: 1})
		w := f.paid("evt_admin_race")
		issued := make([]int, 4)
		var wg sync.WaitGroup
		for i := range issued {
			wg.Go(func() {
				res, err := f.svc.HandleProviderWebhook(t.Context(), w)
				if err != nil {
					t.Errorf("HandleProviderWebhook() error = %v", err)
					return
				}
				issued[i] = res.Issued
			})
		}
		wg.Wait()
		slices.Sort(issued)
		if !slices.Equal(issued, []int{0, 0, 0, 1}) {
			t.Errorf("issued by each = %v, want one licence in all", issued)
		}
		if got := len(f.licences(t)); got != 1 {
			t.Errorf("licences = %d, want 1", got)
		}
	})
}

// rerunFirst is a store whose first transaction once armed fails at
// recording the provider event and is run again, as PostgreSQL's InTx runs
// a deadlock victim again.
type rerunFirst struct {
	store.Store
	armed atomic.Bool
}

var errVictim = errors.New("deadlock victim")

func (s *rerunFirst) InTx(ctx context.Context, fn func(store.Tx) error) error {
	if s.armed.CompareAndSwap(true, false) {
		err := s.Store.InTx(ctx, func(tx store.Tx) error { return fn(failingEventTx{tx}) })
		if !errors.Is(err, errVictim) {
			return err
		}
	}
	return s.Store.InTx(ctx, fn)
}

var errRunAgain = errors.New("serialization failure")

// rerunTx is a store whose first transaction runs fn and rolls back, then,
// after between, runs fn again, as PostgreSQL's InTx does after a
// serialization failure.
type rerunTx struct {
	store.Store
	between func()
	ran     bool
}

func (s *rerunTx) InTx(ctx context.Context, fn func(store.Tx) error) error {
	if !s.ran {
		s.ran = true
		err := s.Store.InTx(ctx, func(tx store.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return errRunAgain
		})
		if !errors.Is(err, errRunAgain) {
			return err
		}
		s.between()
	}
	return s.Store.InTx(ctx, fn)
}

type failingEventTx struct{ store.Tx }

func (failingEventTx) RecordProviderEvent(context.Context, string, string, time.Time) (bool, error) {
	return false, errVictim
}

// TestHandleProviderWebhookRunAgainAfterFailure checks that a webhook's transaction run
// again after a failed first run answers what the second run did: a new
// event is not reported as repeated.
func TestHandleProviderWebhookRunAgainAfterFailure(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		rerun := &rerunFirst{Store: st}
		f := newWebhookFixture(t, rerun)
		f.shop.AddCheckout("cs_admin_1", providers.Item{ProductID: "prod_app", Quantity: 1})
		rerun.armed.Store(true)
		res, err := f.svc.HandleProviderWebhook(t.Context(), f.paid("evt_admin_again"))
		if err != nil {
			t.Fatalf("HandleProviderWebhook() error = %v", err)
		}
		if res.Repeated || res.Issued != 1 {
			t.Errorf("result = %+v, want one issued, not repeated", res)
		}
	})
}

// TestHandleProviderWebhookRunAgain, on both engines: a delivery whose
// transaction is run again, after another delivery of the same event
// committed, reports what its last run did: repeated, nothing issued.
func TestHandleProviderWebhookRunAgain(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newWebhookFixture(t, st)
		f.shop.AddCheckout("cs_admin_1", providers.Item{ProductID: "prod_app", Quantity: 1})
		w := f.paid("evt_admin_again")
		rerun := &rerunTx{Store: st, between: func() {
			if _, err := f.svc.HandleProviderWebhook(t.Context(), w); err != nil {
				t.Errorf("HandleProviderWebhook(other delivery) error = %v", err)
			}
		}}
		res, err := f.service(rerun).HandleProviderWebhook(t.Context(), w)
		if err != nil {
			t.Fatalf("HandleProviderWebhook() error = %v", err)
		}
		if !res.Repeated || res.Issued != 0 {
			t.Errorf("result = %+v, want repeated, nothing issued", res)
		}
		if got := len(f.licences(t)); got != 1 {
			t.Errorf("licences = %d, want 1", got)
		}
	})
}

// TestHandleProviderWebhookEmptyRenewalURL: a mapping may save an empty
// renewal_url (a string up to 2048 characters), and its orders issue their
// licences with it.
func TestHandleProviderWebhookEmptyRenewalURL(t *testing.T) {
	f := newWebhookFixture(t, storetest.OpenSQLite(t))
	if _, err := f.svc.PutMapping(t.Context(), licentia.OperatorActor, f.org.ID, f.integ, "prod_app",
		admin.PutMapping{ProductID: str("app"), RenewalURL: str("")}); err != nil {
		t.Fatal(err)
	}
	f.shop.AddCheckout("cs_admin_1", providers.Item{ProductID: "prod_app", Quantity: 1})
	res, err := f.svc.HandleProviderWebhook(t.Context(), f.paid("evt_admin_empty_url"))
	if err != nil {
		t.Fatalf("HandleProviderWebhook() error = %v", err)
	}
	ls := f.licences(t)
	if res.Issued != 1 || len(ls) != 1 || ls[0].RenewalURL == nil || *ls[0].RenewalURL != "" {
		t.Errorf("result %+v, licences %+v; want one licence with an empty renewal_url", res, ls)
	}
}

package admin_test

import (
	"context"
	"sync"
	"testing"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/providers"
	"github.com/licentia/licentia/internal/providers/providertest"
	"github.com/licentia/licentia/internal/store"
)

// gatedStore is a real store whose transactions start only once n callers
// have asked for one, so racing operations have all done their reads
// before any of them writes: a race the scheduler cannot decide for them.
type gatedStore struct {
	store.Store
	arrived *sync.WaitGroup
}

func newGatedStore(st store.Store, n int) *gatedStore {
	g := &gatedStore{Store: st, arrived: &sync.WaitGroup{}}
	g.arrived.Add(n)
	return g
}

func (g *gatedStore) InTx(ctx context.Context, fn func(store.Tx) error) error {
	g.arrived.Done()
	g.arrived.Wait()
	return g.Store.InTx(ctx, fn)
}

// holdBadEmail sends the fixture's paid checkout with an email failing the
// rule and returns the order it held.
func holdBadEmail(t *testing.T, f *webhookFixture) licentia.HeldOrder {
	t.Helper()
	f.shop.AddCheckout("cs_admin_1", providers.Item{ProductID: "prod_app", Quantity: 2})
	body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: "evt_held_1", SessionID: "cs_admin_1",
		PaymentIntent: "pi_admin_1", Customer: "cus_admin_1", Email: "no address"}, f.clk.Now())
	w := f.paid("evt_held_1")
	w.Body = body
	w.Header.Set("Stripe-Signature", providertest.StripeSignature(body, webhookSecret, f.clk.Now()))
	res, err := f.svc.HandleProviderWebhook(t.Context(), w)
	if err != nil || !res.Held {
		t.Fatalf("HandleProviderWebhook() = %+v, %v; want the order held", res, err)
	}
	hs, err := f.svc.ListHeldOrders(t.Context(), f.org.ID)
	if err != nil || len(hs) != 1 {
		t.Fatalf("ListHeldOrders() = %d, %v; want 1", len(hs), err)
	}
	return hs[0]
}

// TestHeldOrderReleaseRace, on both engines: two releases of one held
// order, both past their reads before either writes; exactly one issues
// (201), the other answers 409 conflict, and the order's licence exists
// once. A release after that answers 404 not_found.
func TestHeldOrderReleaseRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newWebhookFixture(t, st)
		h := holdBadEmail(t, f)
		racers := f.service(newGatedStore(st, 2))
		var mu sync.Mutex
		codes := map[licentia.Code]int{}
		issued := 0
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				ls, err := racers.ReleaseHeldOrder(t.Context(), licentia.OperatorActor, f.org.ID, h.ID,
					admin.HeldRelease{Email: str("buyer@example.com")})
				mu.Lock()
				defer mu.Unlock()
				code := licentia.Code("ok")
				if err != nil {
					code = licentia.ErrorCode(err)
				}
				codes[code]++
				issued += len(ls)
			})
		}
		wg.Wait()
		if codes["ok"] != 1 || codes[licentia.CodeConflict] != 1 || issued != 1 {
			t.Errorf("racing releases: %v, %d licences answered; want one success with a licence and one conflict", codes, issued)
		}
		ls := f.licences(t)
		if len(ls) != 1 || ls[0].LimitCount != 2 || ls[0].Email != "buyer@example.com" {
			t.Errorf("licences = %+v, want one of limit 2 for the corrected email", ls)
		}
		_, err := f.svc.ReleaseHeldOrder(t.Context(), licentia.OperatorActor, f.org.ID, h.ID, admin.HeldRelease{Email: str("buyer@example.com")})
		wantCode(t, "ReleaseHeldOrder(released)", err, licentia.CodeNotFound)
	})
}

// TestHeldOrderReleaseAndDropRace, on both engines: a release and a drop
// of one held order at once; exactly one settles it, the other answers
// 409 conflict, and a licence exists only when the release won.
func TestHeldOrderReleaseAndDropRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newWebhookFixture(t, st)
		h := holdBadEmail(t, f)
		racers := f.service(newGatedStore(st, 2))
		var releaseErr, dropErr error
		var wg sync.WaitGroup
		wg.Go(func() {
			_, releaseErr = racers.ReleaseHeldOrder(t.Context(), licentia.OperatorActor, f.org.ID, h.ID,
				admin.HeldRelease{Email: str("buyer@example.com")})
		})
		wg.Go(func() { dropErr = racers.DropHeldOrder(t.Context(), licentia.OperatorActor, f.org.ID, h.ID) })
		wg.Wait()
		released, dropped := releaseErr == nil, dropErr == nil
		if released == dropped {
			t.Fatalf("release: %v, drop: %v; want exactly one to succeed", releaseErr, dropErr)
		}
		loser := map[bool]error{true: dropErr, false: releaseErr}[released]
		wantCode(t, "the race's loser", loser, licentia.CodeConflict)
		if n, want := len(f.licences(t)), map[bool]int{true: 1, false: 0}[released]; n != want {
			t.Errorf("licences = %d, want %d", n, want)
		}
	})
}

// TestHeldOrderResentOnce, on both engines: the held order's event sent
// again, and the same order under another event id, hold nothing more.
func TestHeldOrderResentOnce(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newWebhookFixture(t, st)
		h := holdBadEmail(t, f)
		for _, eventID := range []string{"evt_held_1", "evt_held_2"} {
			body := providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: eventID, SessionID: "cs_admin_1",
				PaymentIntent: "pi_admin_1", Customer: "cus_admin_1", Email: "no address"}, f.clk.Now())
			w := f.paid(eventID)
			w.Body = body
			w.Header.Set("Stripe-Signature", providertest.StripeSignature(body, webhookSecret, f.clk.Now()))
			if res, err := f.svc.HandleProviderWebhook(t.Context(), w); err != nil || res.Held {
				t.Errorf("HandleProviderWebhook(%s again) = %+v, %v; want nothing held", eventID, res, err)
			}
		}
		hs, err := f.svc.ListHeldOrders(t.Context(), f.org.ID)
		if err != nil || len(hs) != 1 || hs[0].ID != h.ID {
			t.Errorf("ListHeldOrders() = %+v, %v; want the one order", hs, err)
		}
	})
}

// TestHeldOrderHoldRace, on both engines: one order brought at once by
// several events (a resend under new ids) is held once, with one
// order.held.
func TestHeldOrderHoldRace(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		f := newWebhookFixture(t, st)
		f.shop.AddCheckout("cs_admin_1", providers.Item{ProductID: "prod_app", Quantity: 1})
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				eventID := "evt_race_" + string(rune('a'+i))
				w := f.signed(providertest.StripeCheckoutEvent(providertest.StripeCheckout{EventID: eventID, SessionID: "cs_admin_1",
					PaymentIntent: "pi_admin_1", Customer: "cus_admin_1", Email: "no address"}, f.clk.Now()))
				if _, err := f.svc.HandleProviderWebhook(t.Context(), w); err != nil {
					t.Errorf("HandleProviderWebhook(%s) error = %v", eventID, err)
				}
			})
		}
		wg.Wait()
		hs, err := f.svc.ListHeldOrders(t.Context(), f.org.ID)
		if err != nil || len(hs) != 1 {
			t.Errorf("ListHeldOrders() = %d, %v; want 1", len(hs), err)
		}
		evs, err := st.OrganizationEvents(t.Context(), f.org.ID)
		if err != nil || len(evs) != 1 || evs[0].Type != licentia.EventOrderHeld {
			t.Errorf("events = %d, %v; want one order.held", len(evs), err)
		}
	})
}

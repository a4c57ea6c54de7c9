package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// newHeldOrder returns an order of integration i held for reason at at,
// its raw body invalid UTF-8 and a zero byte, as a text_invalid order's
// would be.
func newHeldOrder(i *licentia.Integration, orderKey string, reason licentia.HeldReason, at time.Time) *licentia.HeldOrder {
	return &licentia.HeldOrder{
		ID: licentia.NewID(), OrgID: i.OrgID, IntegrationID: i.ID, Provider: i.Provider, EventID: "evt_" + orderKey,
		OrderKey: orderKey, OrderID: ptr(orderKey), CheckoutID: ptr("cs_" + orderKey), OrderNumber: ptr("1001"),
		CustomerID: ptr("cus_1"), SubscriptionID: ptr("sub_1"), Email: ptr("not an email"), Subscription: true,
		TrialEndsAt: ptr(at.Add(14 * 24 * time.Hour)), Reason: reason,
		Items: []licentia.HeldItem{{ProviderProductID: "prod_a", Quantity: 3, ProductID: ptr("app")},
			{ProviderProductID: "prod_\u0000b", Quantity: 1}},
		RawBody: []byte("{\"email\":\"\xff\x00\"}"), Status: licentia.HeldPending, CreatedAt: at,
	}
}

func createHeldOrders(t *testing.T, s store.Store, hs ...*licentia.HeldOrder) {
	t.Helper()
	inTx(t, s, func(tx store.Tx) error {
		for _, h := range hs {
			created, err := tx.CreateHeldOrder(t.Context(), h)
			if err != nil {
				return err
			}
			if !created {
				t.Errorf("CreateHeldOrder(%s) = false, want true", h.OrderKey)
			}
		}
		return nil
	})
}

// testHeldOrders: held orders read back as written, raw bytes and all; the
// list holds those still held oldest first; one order key of an
// integration is held once; a settled order leaves the list, its raw body
// erased, and is read no more; settling twice changes nothing; another
// organization's order is never read, counted or settled.
func testHeldOrders(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b := createOrganization(t, s, "acme"), createOrganization(t, s, "globex")
	ia, ib := newIntegration(a.ID, base), newIntegration(b.ID, base)
	createIntegrations(t, s, ia, ib)
	second := newHeldOrder(ia, "pi_2", licentia.HeldTextInvalid, base.Add(time.Second))
	first := newHeldOrder(ia, "pi_1", licentia.HeldEmailInvalid, base)
	first.OrderID, first.Email, first.TrialEndsAt, first.Subscription, first.RawBody = nil, nil, nil, false, nil
	theirs := newHeldOrder(ib, "pi_1", licentia.HeldLimitTooLarge, base)
	createHeldOrders(t, s, second, first, theirs)

	got, err := s.HeldOrders(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]licentia.HeldOrder{*first, *second}, got); diff != "" {
		t.Errorf("HeldOrders() (-want +got):\n%s", diff)
	}
	if n, err := s.CountHeldOrders(ctx, a.ID); n != 2 || err != nil {
		t.Errorf("CountHeldOrders() = %d, %v, want 2", n, err)
	}
	one, err := s.HeldOrder(ctx, a.ID, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(second, one); diff != "" {
		t.Errorf("HeldOrder() (-want +got):\n%s", diff)
	}
	_, err = s.HeldOrder(ctx, b.ID, second.ID)
	wantCode(t, "HeldOrder(another organization's)", err, licentia.CodeNotFound)
	_, err = s.HeldOrder(ctx, a.ID, "not-a-uuid")
	wantCode(t, "HeldOrder(malformed id)", err, licentia.CodeNotFound)

	inTx(t, s, func(tx store.Tx) error {
		again := newHeldOrder(ia, "pi_1", licentia.HeldEmailInvalid, base.Add(time.Minute))
		if created, err := tx.CreateHeldOrder(ctx, again); created || err != nil {
			t.Errorf("CreateHeldOrder(same order key) = %v, %v, want false, nil", created, err)
		}
		if done, err := tx.SettleHeldOrder(ctx, b.ID, second.ID, licentia.HeldReleased, base); done || err != nil {
			t.Errorf("SettleHeldOrder(another organization's) = %v, %v, want false, nil", done, err)
		}
		if done, err := tx.SettleHeldOrder(ctx, a.ID, second.ID, licentia.HeldReleased, base.Add(time.Hour)); !done || err != nil {
			t.Errorf("SettleHeldOrder() = %v, %v, want true, nil", done, err)
		}
		if done, err := tx.SettleHeldOrder(ctx, a.ID, second.ID, licentia.HeldDropped, base.Add(time.Hour)); done || err != nil {
			t.Errorf("SettleHeldOrder(settled) = %v, %v, want false, nil", done, err)
		}
		return nil
	})
	_, err = s.HeldOrder(ctx, a.ID, second.ID)
	wantCode(t, "HeldOrder(released)", err, licentia.CodeNotFound)
	if got, _ := s.HeldOrders(ctx, a.ID); len(got) != 1 || got[0].ID != first.ID {
		t.Errorf("HeldOrders() after release = %v, want the first alone", got)
	}
	if got, _ := s.HeldOrders(ctx, b.ID); len(got) != 1 || got[0].ID != theirs.ID {
		t.Errorf("HeldOrders(other organization) = %v, want theirs alone", got)
	}
	// A released order is never held again, under a new event id too.
	inTx(t, s, func(tx store.Tx) error {
		if created, err := tx.CreateHeldOrder(ctx, newHeldOrder(ia, "pi_2", licentia.HeldTextInvalid, base)); created || err != nil {
			t.Errorf("CreateHeldOrder(released order) = %v, %v, want false, nil", created, err)
		}
		return nil
	})
}

// testHeldOrderSettleRace: of several transactions settling one order at
// once, exactly one does.
func testHeldOrderSettleRace(t *testing.T, s store.Store) {
	ctx := t.Context()
	o := createOrganization(t, s, "acme")
	i := newIntegration(o.ID, base)
	createIntegrations(t, s, i)
	h := newHeldOrder(i, "pi_1", licentia.HeldEmailInvalid, base)
	createHeldOrders(t, s, h)
	var won atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			err := s.InTx(ctx, func(tx store.Tx) error {
				done, err := tx.SettleHeldOrder(ctx, o.ID, h.ID, licentia.HeldReleased, base)
				if done {
					won.Add(1)
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Errorf("settled %d times, want 1", won.Load())
	}
}

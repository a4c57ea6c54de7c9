package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// testLockSeat: LockSeat reads what LockLicence, LiveActivation and
// Product read, in one call: the licence, the machine's live activation
// (none for a machine whose activation ended, or one of another licence),
// and the licence's product with its keys when asked. Another
// organization's licence is not found, as with LockLicence; and the
// licence is held, so a change of its seat in the same transaction works.
func testLockSeat(t *testing.T, s store.Store) {
	ctx := t.Context()
	o, p := licenceSetup(t, s, "acme")
	stranger, _ := licenceSetup(t, s, "globex")
	l, other := newLicence(o.ID, p.ID, "a@example.com", base), newLicence(o.ID, p.ID, "b@example.com", base)
	createLicences(t, s, l, other)
	held, ended, elsewhere := newActivation(l, "machine-1"), newActivation(l, "machine-2"), newActivation(other, "machine-3")
	createActivations(t, s, held, ended, elsewhere)
	second := newProductKey(p.ID, licentia.KeyCurrent, base.Add(time.Hour))
	inTx(t, s, func(tx store.Tx) error {
		if _, _, err := tx.DeactivateActivation(ctx, o.ID, ended.ID, base); err != nil {
			return err
		}
		return tx.AddProductKey(ctx, &second)
	})
	wantLicence := readLicence(t, s, o.ID, l.ID)
	wantHeld, err := s.Activation(ctx, o.ID, held.ID)
	if err != nil {
		t.Fatalf("Activation() error = %v", err)
	}
	wantProduct, err := s.Product(ctx, o.ID, p.ID)
	if err != nil || len(wantProduct.Keys) != 2 {
		t.Fatalf("Product() = %+v, %v; want two keys", wantProduct, err)
	}

	for _, c := range []struct {
		machine  string
		product  bool
		wantHeld *licentia.Activation
	}{
		{"machine-1", true, wantHeld},
		{"machine-1", false, wantHeld},
		{"machine-2", true, nil},
		{"machine-3", false, nil},
		{"machine-\x00", true, nil},
	} {
		err := s.InTx(ctx, func(tx store.Tx) error {
			got, err := tx.LockSeat(ctx, o.ID, l.ID, c.machine, c.product)
			if err != nil {
				t.Errorf("LockSeat(%q, %v) error = %v", c.machine, c.product, err)
				return nil
			}
			if diff := cmp.Diff(wantLicence, got.Licence); diff != "" {
				t.Errorf("LockSeat(%q).Licence mismatch (-want +got):\n%s", c.machine, diff)
			}
			if diff := cmp.Diff(c.wantHeld, got.Held); diff != "" {
				t.Errorf("LockSeat(%q).Held mismatch (-want +got):\n%s", c.machine, diff)
			}
			want := wantProduct
			if !c.product {
				want = nil
			}
			if diff := cmp.Diff(want, got.Product); diff != "" {
				t.Errorf("LockSeat(%q, %v).Product mismatch (-want +got):\n%s", c.machine, c.product, diff)
			}
			if got.Held == nil {
				return nil
			}
			// Held, the licence's seat changes in the same transaction.
			_, ok, err := tx.DeactivateActivation(ctx, o.ID, got.Held.ID, base)
			if err != nil || !ok {
				t.Errorf("DeactivateActivation() after LockSeat = %v, %v; want true, nil", ok, err)
			}
			return errRollback
		})
		if err != nil && !errors.Is(err, errRollback) {
			t.Errorf("InTx() error = %v", err)
		}
	}
	if got := readLicence(t, s, o.ID, l.ID).LiveActivations; got != 1 {
		t.Errorf("LiveActivations after rolled-back changes = %d, want 1", got)
	}

	inTx(t, s, func(tx store.Tx) error {
		_, want := tx.LockLicence(ctx, o.ID, licentia.NewID())
		wantCode(t, "LockLicence(missing)", want, licentia.CodeLicenceNotFound)
		for _, id := range []string{licentia.NewID(), l.ID, "not-an-id"} {
			_, err := tx.LockSeat(ctx, stranger.ID, id, "machine-1", true)
			wantCode(t, "LockSeat(another organization's)", err, licentia.CodeLicenceNotFound)
		}
		return nil
	})
}

package activation_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/licentia"
)

// TestSeatLimitMessage: a licence of 1 seat on a product of 3 machines per
// seat holds 3 machines, and the 4th is refused with a message that counts
// in machines and says where the 3 come from; the code and details stay
// the contract's. Lowering machines_per_seat evicts nobody, and the message
// then says how many are in use beyond the limit.
func TestSeatLimitMessage(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine.name, func(t *testing.T) {
			f := newFixture(t, engine.open(t))
			ctx := t.Context()
			v, err := f.admin.IssueLicence(ctx, licentia.OperatorActor, f.org.ID, admin.NewLicence{
				ProductID: ptr("desk-app"), Email: ptr("ada@example.com"),
			})
			if err != nil {
				t.Fatalf("IssueLicence() error = %v", err)
			}
			if v.Licence.LimitKind != licentia.LimitSeats || v.Licence.LimitCount != 1 {
				t.Fatalf("licence limit = %d %s, want the default 1 seat", v.Licence.LimitCount, v.Licence.LimitKind)
			}
			key := *v.Key
			for i := range 3 {
				if _, err := f.svc.Activate(ctx, activate(key, machine(fmt.Sprintf("m-%d", i)))); err != nil {
					t.Fatalf("Activate() of machine %d of 3 error = %v, want a seat", i+1, err)
				}
			}
			want := &licentia.Error{Code: licentia.CodeSeatLimitReached,
				Message: "All 3 machines of this licence are in use (1 seat × 3 machines per seat).",
				Details: map[string]any{"limit": int64(3), "active": int64(3), "limit_kind": licentia.LimitSeats}}
			_, err = f.svc.Activate(ctx, activate(key, machine("m-3")))
			if diff := cmp.Diff(want, asError(err)); diff != "" {
				t.Errorf("Activate() of a 4th machine error (-want +got):\n%s", diff)
			}

			_, err = f.admin.UpdateProduct(ctx, licentia.OperatorActor, f.org.ID, "desk-app", admin.ProductPatch{MachinesPerSeat: ptr[int64](2)})
			if err != nil {
				t.Fatalf("UpdateProduct() error = %v", err)
			}
			want.Message = "3 machines of this licence are in use, and it allows 2 (1 seat × 2 machines per seat)."
			want.Details = map[string]any{"limit": int64(2), "active": int64(3), "limit_kind": licentia.LimitSeats}
			_, err = f.svc.Activate(ctx, activate(key, machine("m-3")))
			if diff := cmp.Diff(want, asError(err)); diff != "" {
				t.Errorf("Activate() after machines_per_seat 3 -> 2 error (-want +got):\n%s", diff)
			}
		})
	}
}

// asError is err's *licentia.Error without its cause, or nil.
func asError(err error) *licentia.Error {
	e, ok := errors.AsType[*licentia.Error](err)
	if !ok {
		return nil
	}
	return &licentia.Error{Code: e.Code, Message: e.Message, Details: e.Details}
}

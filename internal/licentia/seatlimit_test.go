package licentia_test

import (
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

func TestSeatLimitReachedMessage(t *testing.T) {
	for _, tt := range []struct {
		name           string
		kind           licentia.LimitKind
		count, perSeat int64
		active         int64
		want           string
		wantLimit      int64
	}{
		{"one seat", licentia.LimitSeats, 1, 3, 3, "All 3 machines of this licence are in use (1 seat × 3 machines per seat).", 3},
		{"seats of one machine", licentia.LimitSeats, 2, 1, 2, "All 2 machines of this licence are in use (2 seats × 1 machine per seat).", 2},
		{"one machine from a seat", licentia.LimitSeats, 1, 1, 1, "The one machine of this licence is in use (1 seat × 1 machine per seat).", 1},
		{"machines", licentia.LimitMachines, 5, 3, 5, "All 5 machines of this licence are in use.", 5},
		{"one machine", licentia.LimitMachines, 1, 3, 1, "The one machine of this licence is in use.", 1},
		{"more in use than allowed", licentia.LimitMachines, 2, 3, 4, "4 machines of this licence are in use, and it allows 2.", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := &licentia.Licence{LimitKind: tt.kind, LimitCount: tt.count}
			e := licentia.SeatLimitReached(l, tt.perSeat, tt.active)
			if e.Code != licentia.CodeSeatLimitReached || e.Message != tt.want {
				t.Errorf("SeatLimitReached() = %s %q, want seat_limit_reached %q", e.Code, e.Message, tt.want)
			}
			if e.Details["limit"] != tt.wantLimit || e.Details["active"] != tt.active || e.Details["limit_kind"] != tt.kind {
				t.Errorf("SeatLimitReached() details = %v, want limit %d, active %d, limit_kind %s", e.Details, tt.wantLimit, tt.active, tt.kind)
			}
		})
	}
}

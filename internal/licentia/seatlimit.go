package licentia

import "fmt"

// SeatLimitReached is the seat_limit_reached error of a licence whose live
// machines (active) fill what it allows at machinesPerSeat. The message
// counts in machines, as the details do, and for a seats licence shows the
// multiplication: a licence of 1 seat that holds 3 machines and then
// refuses a 4th reads as a fault to whoever does not know machines_per_seat.
func SeatLimitReached(l *Licence, machinesPerSeat, active int64) *Error {
	allowed := l.MachinesAllowed(machinesPerSeat)
	var msg string
	switch {
	case active > allowed:
		// Lowering machines_per_seat or the limit evicts nobody.
		msg = fmt.Sprintf("%s of this licence are in use, and it allows %d", nounCount(active, "machine", "machines"), allowed)
	case allowed == 1:
		msg = "The one machine of this licence is in use"
	default:
		msg = fmt.Sprintf("All %d machines of this licence are in use", allowed)
	}
	if l.LimitKind == LimitSeats {
		msg += fmt.Sprintf(" (%s × %s per seat)", nounCount(l.LimitCount, "seat", "seats"),
			nounCount(machinesPerSeat, "machine", "machines"))
	}
	return &Error{Code: CodeSeatLimitReached, Message: msg + ".",
		Details: map[string]any{"limit": allowed, "active": active, "limit_kind": l.LimitKind}}
}

// nounCount writes n with the singular or plural noun.
func nounCount(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

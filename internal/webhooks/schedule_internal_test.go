package webhooks

import (
	"testing"
	"time"
)

// TestNextAttempt: after attempts 1 to 8 the next one comes after the
// documented wait, spread by up to 10% either way and never all alike; after
// the ninth there is none. The waits add up to about 55 hours.
func TestNextAttempt(t *testing.T) {
	now := time.Date(2026, 11, 22, 1, 16, 13, 250_000_000, time.UTC)
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
		5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 24 * time.Hour}
	if MaxAttempts != 9 {
		t.Errorf("MaxAttempts = %d, want 9", MaxAttempts)
	}
	var total time.Duration
	for attempts := 1; attempts <= 8; attempts++ {
		base := want[attempts-1]
		total += base
		seen := map[time.Time]bool{}
		for range 200 {
			next, ok := nextAttempt(attempts, now)
			if !ok {
				t.Fatalf("nextAttempt(%d) = none, want one", attempts)
			}
			if wait := next.Sub(now); wait < base-base/10-time.Millisecond || wait > base+base/10 {
				t.Errorf("nextAttempt(%d) in %v, want %v ± 10%%", attempts, wait, base)
			}
			if next != next.Truncate(time.Millisecond) {
				t.Errorf("nextAttempt(%d) = %v, want whole milliseconds", attempts, next)
			}
			seen[next] = true
		}
		if len(seen) < 2 {
			t.Errorf("nextAttempt(%d) always %v: no spread", attempts, seen)
		}
	}
	if total < 55*time.Hour || total > 56*time.Hour {
		t.Errorf("waits add up to %v, want about 55 hours", total)
	}
	for _, attempts := range []int{9, 10, 20} {
		if next, ok := nextAttempt(attempts, now); ok {
			t.Errorf("nextAttempt(%d) = %v, want none", attempts, next)
		}
	}
}

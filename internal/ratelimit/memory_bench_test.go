package ratelimit_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/ratelimit/ratelimittest"
)

// BenchmarkMemoryAllowAmongMany counts one request a second, by the clock,
// while 400,000 counters of a long window are held: the counters that a
// flood of distinct client addresses leaves. Each request holds the
// limiter's one lock for as long as it takes, and every other request of
// the process waits meanwhile.
func BenchmarkMemoryAllowAmongMany(b *testing.B) {
	clk := clock.NewFake(ratelimittest.Start)
	m := ratelimit.NewMemory(clk)
	long := ratelimit.Rule{Name: "long", Limit: 10, Window: 10 * 365 * 24 * time.Hour}
	for i := range 400_000 {
		if _, err := m.Allow(b.Context(), long, strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		clk.Advance(time.Second)
		if _, err := m.Allow(b.Context(), ratelimit.Public, "203.0.113.7"); err != nil {
			b.Fatal(err)
		}
	}
}

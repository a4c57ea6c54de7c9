package ratelimit_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/ratelimit/ratelimittest"
)

func TestMemory(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T, clk *clock.Fake) ratelimit.Limiter {
		return ratelimit.NewMemory(clk)
	})
}

// TestMemorySystemClock runs the suite as a back end that cannot follow a
// fake clock would (a Redis limiter reading the server's time): the checks
// that need time moved are skipped, the others hold on the real clock.
func TestMemorySystemClock(t *testing.T) {
	ratelimittest.RunClock(t, func(t *testing.T) (ratelimit.Limiter, ratelimittest.Clock) {
		return ratelimit.NewMemory(clock.System{}), clock.System{}
	})
}

func TestMemoryForgetsOldCounters(t *testing.T) {
	ctx := t.Context()
	clk := clock.NewFake(ratelimittest.Start)
	m := ratelimit.NewMemory(clk)
	minute := ratelimit.Rule{Name: "minute", Limit: 10, Window: time.Minute}
	day := ratelimit.Rule{Name: "day", Limit: 10, Window: 24 * time.Hour}
	allow := func(rule ratelimit.Rule, key string) ratelimit.Result {
		t.Helper()
		res, err := m.Allow(ctx, rule, key)
		if err != nil {
			t.Fatalf("Allow(%q, %q) error = %v", rule.Name, key, err)
		}
		return res
	}

	for i := range 100 {
		allow(minute, fmt.Sprintf("subject-%d", i))
	}
	allow(day, "long")
	if got := ratelimit.Counters(m); got != 101 {
		t.Fatalf("Counters() after 101 subjects = %d, want 101", got)
	}

	// Within the window, every counter and its count stay.
	clk.Advance(2 * time.Second)
	if got := allow(minute, "subject-0"); got.Remaining != minute.Limit-2 {
		t.Errorf("Remaining later within the window = %d, want %d", got.Remaining, minute.Limit-2)
	}
	if got := ratelimit.Counters(m); got != 101 {
		t.Errorf("Counters() later within the window = %d, want 101", got)
	}

	// Once the minute's window has ended, its counters go, all together at
	// the next request; the day's stays.
	clk.Advance(time.Minute)
	allow(minute, "newcomer")
	if got := ratelimit.Counters(m); got != 2 {
		t.Errorf("Counters() after the window reset = %d, want 2 (the day counter and the newcomer)", got)
	}
	if got := allow(day, "long"); got.Remaining != day.Limit-2 {
		t.Errorf("day Remaining after the minute ended = %d, want %d", got.Remaining, day.Limit-2)
	}
}

// TestMemoryCountersHoldNoPointers: the garbage collector skips a map whose
// keys and values hold no pointers, however many counters a flood of
// distinct addresses leaves in it.
func TestMemoryCountersHoldNoPointers(t *testing.T) {
	var holds func(reflect.Type) bool
	holds = func(t reflect.Type) bool {
		switch t.Kind() {
		case reflect.Array:
			return holds(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				if holds(t.Field(i).Type) {
					return true
				}
			}
			return false
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
			return false
		}
		return true
	}
	for _, typ := range ratelimit.CounterTypes {
		if holds(typ) {
			t.Errorf("%v holds a pointer: the collector would scan every counter", typ)
		}
	}
}

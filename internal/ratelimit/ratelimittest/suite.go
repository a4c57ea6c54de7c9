// Package ratelimittest is the suite every ratelimit.Limiter back end runs,
// so that the memory limiter and the Redis limiter count alike.
//
// Time. Windows are fixed and aligned to the Unix epoch, so what a request
// answers depends on where in its window it falls. The suite reads the back
// end's time through Clock and brackets every request with a reading before
// and after it. With a fake clock the two readings are equal and every check
// is exact. With a clock the suite cannot stop (a Redis limiter that reads
// the server's TIME) the checks allow for the time a request took, and a run
// that crossed a window boundary is repeated with fresh keys, so the suite is
// never flaky and never sleeps. Tests that must move time (a new window, the
// reset at a window's edges) need a Clock that is also an Advancer; for back
// ends whose clock is not one they are skipped, by name.
package ratelimittest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/ratelimit"
)

// Clock is the time a back end counts its windows in, as the suite reads
// it. It must agree with the back end's own time: for a Redis limiter that
// reads the server's clock, Now asks the server.
type Clock interface {
	Now() time.Time
}

// Advancer is a Clock the suite can move forward. *clock.Fake is one.
type Advancer interface {
	Clock
	Advance(d time.Duration)
}

// Start is where the fake clock of Run begins: inside a window of every size
// the suite uses, not on its edge.
var Start = time.Date(2026, 11, 22, 1, 16, 13, 250_000_000, time.UTC)

// Run runs the suite against a back end that reads its time from clk, a fake
// clock set to Start.
func Run(t *testing.T, newLimiter func(t *testing.T, clk *clock.Fake) ratelimit.Limiter) {
	t.Helper()
	RunClock(t, func(t *testing.T) (ratelimit.Limiter, Clock) {
		clk := clock.NewFake(Start)
		return newLimiter(t, clk), clk
	})
}

// RunClock runs the suite against a back end that counts in the time of the
// Clock it returns. newBackend is called once per test, so each test starts
// with no counts.
func RunClock(t *testing.T, newBackend func(t *testing.T) (ratelimit.Limiter, Clock)) {
	t.Helper()
	for _, tt := range []struct {
		name string
		test func(t *testing.T, l ratelimit.Limiter, clk Clock)
	}{
		{"LimitThenRefused", testLimitThenRefused},
		{"ResetIsTimeToEpochAlignedWindowEnd", testResetAligned},
		{"ResetAtWindowEdges", testResetAtEdges},
		{"KeysCountedSeparately", testKeysSeparate},
		{"RulesCountedSeparately", testRulesSeparate},
		{"NewWindowAllowsAgain", testNewWindow},
		{"ConcurrentCallersNeverExceedLimit", testConcurrent},
		{"ReleaseGivesBack", testReleaseGivesBack},
		{"ReleaseNeverBelowZero", testReleaseNeverBelowZero},
		{"ReleaseInLaterWindowDoesNothing", testReleaseLaterWindow},
		{"ConcurrentReserveAndRelease", testConcurrentRelease},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, clk := newBackend(t)
			tt.test(t, l, clk)
		})
	}
}

// call is one request and the back end's time around it.
type call struct {
	res           ratelimit.Result
	before, after time.Time
}

func allow(t *testing.T, l ratelimit.Limiter, clk Clock, rule ratelimit.Rule, key string) call {
	t.Helper()
	before := clk.Now()
	res, err := l.Allow(t.Context(), rule, key)
	after := clk.Now()
	if err != nil {
		t.Fatalf("Allow(%q, %q) error = %v", rule.Name, key, err)
	}
	return call{res: res, before: before, after: after}
}

// windowStart is the start of the epoch-aligned window of size holding at.
// time.Truncate would align to year 1, which differs for sizes such as 7s.
func windowStart(at time.Time, size time.Duration) time.Time {
	n := at.UnixNano()
	return time.Unix(0, n-n%int64(size)).UTC()
}

// inOneWindow runs run until one run starts and ends in the same window of
// size, and returns its value. With a fake clock the first run always does.
// Each run gets its own attempt number to put in its keys, so a repeated run
// starts from no counts.
func inOneWindow[T any](t *testing.T, clk Clock, size time.Duration, run func(attempt int) T) T {
	t.Helper()
	const attempts = 3
	for attempt := range attempts {
		before := clk.Now()
		v := run(attempt)
		if windowStart(before, size).Equal(windowStart(clk.Now(), size)) {
			return v
		}
	}
	t.Fatalf("every one of %d runs crossed a %v window boundary", attempts, size)
	panic("unreachable")
}

// checkReset reports an error unless c's Reset is the time from the request
// to the end of its epoch-aligned window: between end-after and end-before.
func checkReset(t *testing.T, rule ratelimit.Rule, c call) {
	t.Helper()
	if want := windowStart(c.before, rule.Window); !c.res.Start.Equal(want) {
		t.Errorf("Start = %v, want the start of the window %v", c.res.Start.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	end := windowStart(c.before, rule.Window).Add(rule.Window)
	lo, hi := end.Sub(c.after), end.Sub(c.before)
	if c.res.Reset <= 0 || c.res.Reset > rule.Window || c.res.Reset < lo || c.res.Reset > hi {
		t.Errorf("Reset = %v at %v, want the time to the window's end %v: within [%v, %v], positive, at most %v",
			c.res.Reset, c.before.Format(time.RFC3339Nano), end.Format(time.RFC3339Nano), lo, hi, rule.Window)
	}
}

// wantResults are the answers to n requests in one window, without Reset:
// Limit allowed with Remaining counting down to 0, then refusals.
func wantResults(rule ratelimit.Rule, n int) []ratelimit.Result {
	var out []ratelimit.Result
	for i := range int64(n) {
		out = append(out, ratelimit.Result{Allowed: i < rule.Limit, Limit: rule.Limit, Remaining: max(rule.Limit-i-1, 0)})
	}
	return out
}

// withoutReset are the results of calls without Reset and Start, which
// depend on when each request fell.
func withoutReset(calls []call) []ratelimit.Result {
	out := make([]ratelimit.Result, len(calls))
	for i, c := range calls {
		out[i] = c.res
		out[i].Reset, out[i].Start = 0, time.Time{}
	}
	return out
}

// requests makes n requests for key and returns them.
func requests(t *testing.T, l ratelimit.Limiter, clk Clock, rule ratelimit.Rule, key string, n int) []call {
	t.Helper()
	calls := make([]call, n)
	for i := range calls {
		calls[i] = allow(t, l, clk, rule, key)
	}
	return calls
}

func testLimitThenRefused(t *testing.T, l ratelimit.Limiter, clk Clock) {
	rule := ratelimit.Rule{Name: "suite", Limit: 5, Window: time.Minute}
	calls := inOneWindow(t, clk, rule.Window, func(attempt int) []call {
		return requests(t, l, clk, rule, fmt.Sprintf("subject-%d", attempt), int(rule.Limit)+3)
	})
	if diff := cmp.Diff(wantResults(rule, len(calls)), withoutReset(calls)); diff != "" {
		t.Errorf("Allow() results mismatch (-want +got):\n%s", diff)
	}
	for _, c := range calls {
		checkReset(t, rule, c)
	}
}

func testResetAligned(t *testing.T, l ratelimit.Limiter, clk Clock) {
	// 7s does not divide the seconds from year 1 to 1970, so a window
	// aligned with time.Truncate instead of the epoch shows here.
	for _, window := range []time.Duration{7 * time.Second, time.Minute, time.Hour} {
		t.Run(window.String(), func(t *testing.T) {
			rule := ratelimit.Rule{Name: "aligned", Limit: 2, Window: window}
			calls := inOneWindow(t, clk, window, func(attempt int) []call {
				return requests(t, l, clk, rule, fmt.Sprintf("aligned-%d", attempt), 3)
			})
			for _, c := range calls {
				checkReset(t, rule, c)
			}
		})
	}
}

func advancer(t *testing.T, clk Clock) Advancer {
	t.Helper()
	a, ok := clk.(Advancer)
	if !ok {
		t.Skipf("the back end's clock (%T) cannot be moved", clk)
	}
	return a
}

// toNextWindow moves clk to the start of the next window of size.
func toNextWindow(clk Advancer, size time.Duration) {
	now := clk.Now()
	clk.Advance(windowStart(now, size).Add(size).Sub(now))
}

func testResetAtEdges(t *testing.T, l ratelimit.Limiter, clk Clock) {
	a := advancer(t, clk)
	rule := ratelimit.Rule{Name: "edges", Limit: 3, Window: time.Minute}
	toNextWindow(a, rule.Window)
	if c := allow(t, l, a, rule, "edge"); c.res.Reset != rule.Window {
		t.Errorf("Reset at a window's start = %v, want the whole window %v", c.res.Reset, rule.Window)
	}
	a.Advance(rule.Window - time.Millisecond)
	c := allow(t, l, a, rule, "edge")
	if c.res.Reset != time.Millisecond {
		t.Errorf("Reset 1ms before a window's end = %v, want 1ms", c.res.Reset)
	}
	if c.res.Remaining != rule.Limit-2 {
		t.Errorf("Remaining at the end of the window = %d, want %d (same window as its start)", c.res.Remaining, rule.Limit-2)
	}
}

func testKeysSeparate(t *testing.T, l ratelimit.Limiter, clk Clock) {
	rule := ratelimit.Rule{Name: "keys", Limit: 2, Window: time.Minute}
	type got struct{ a, b, aAgain []ratelimit.Result }
	g := inOneWindow(t, clk, rule.Window, func(attempt int) got {
		a, b := fmt.Sprintf("a-%d", attempt), fmt.Sprintf("b-%d", attempt)
		return got{
			a:      withoutReset(requests(t, l, clk, rule, a, 3)),
			b:      withoutReset(requests(t, l, clk, rule, b, 3)),
			aAgain: withoutReset(requests(t, l, clk, rule, a, 1)),
		}
	})
	want := got{a: wantResults(rule, 3), b: wantResults(rule, 3), aAgain: wantResults(rule, 3)[2:]}
	if diff := cmp.Diff(want, g, cmp.AllowUnexported(got{})); diff != "" {
		t.Errorf("results for keys a and b mismatch (-want +got):\n%s", diff)
	}
}

func testRulesSeparate(t *testing.T, l ratelimit.Limiter, clk Clock) {
	for _, tt := range []struct {
		name         string
		rule1, rule2 string
		key1, key2   string
	}{
		{"same key", "first", "second", "k", "k"},
		// A back end that joins the rule's name and the key into one string
		// must not let these pairs share a count.
		{"pipe", "x|y", "x", "z", "y|z"},
		{"colon", "x:y", "x", "z", "y:z"},
		{"space", "x y", "x", "z", "y z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r1 := ratelimit.Rule{Name: tt.rule1, Limit: 2, Window: time.Minute}
			r2 := ratelimit.Rule{Name: tt.rule2, Limit: 2, Window: time.Minute}
			type got struct{ first, second []ratelimit.Result }
			g := inOneWindow(t, clk, time.Minute, func(attempt int) got {
				suffix := fmt.Sprintf("-%s-%d", tt.name, attempt)
				return got{
					first:  withoutReset(requests(t, l, clk, r1, tt.key1+suffix, 3)),
					second: withoutReset(requests(t, l, clk, r2, tt.key2+suffix, 3)),
				}
			})
			want := got{first: wantResults(r1, 3), second: wantResults(r2, 3)}
			if diff := cmp.Diff(want, g, cmp.AllowUnexported(got{})); diff != "" {
				t.Errorf("results for rules %q and %q mismatch (-want +got):\n%s", tt.rule1, tt.rule2, diff)
			}
		})
	}
}

func testNewWindow(t *testing.T, l ratelimit.Limiter, clk Clock) {
	a := advancer(t, clk)
	rule := ratelimit.Rule{Name: "renew", Limit: 3, Window: time.Minute}
	calls := requests(t, l, a, rule, "renew", int(rule.Limit)+1)
	last := calls[len(calls)-1].res
	if last.Allowed {
		t.Fatalf("request %d of a limit of %d allowed", len(calls), rule.Limit)
	}
	a.Advance(last.Reset - time.Millisecond)
	if c := allow(t, l, a, rule, "renew"); c.res.Allowed {
		t.Errorf("Allow() 1ms before Reset = %+v, want refused", c.res)
	}
	a.Advance(time.Millisecond)
	c := allow(t, l, a, rule, "renew")
	want := ratelimit.Result{Allowed: true, Limit: rule.Limit, Remaining: rule.Limit - 1, Reset: rule.Window, Start: a.Now().UTC()}
	if diff := cmp.Diff(want, c.res); diff != "" {
		t.Errorf("Allow() after Reset mismatch (-want +got):\n%s", diff)
	}
	// A window later still, with nothing counted in between, starts afresh too.
	a.Advance(3 * rule.Window)
	if got := allow(t, l, a, rule, "renew").res; got.Remaining != rule.Limit-1 {
		t.Errorf("Remaining three windows later = %d, want %d", got.Remaining, rule.Limit-1)
	}
}

func testConcurrent(t *testing.T, l ratelimit.Limiter, clk Clock) {
	const goroutines, each = 50, 10
	rule := ratelimit.Rule{Name: "concurrent", Limit: 300, Window: time.Hour}
	type got struct {
		allowed   int64
		remaining map[int64]int
	}
	g := inOneWindow(t, clk, rule.Window, func(attempt int) got {
		key := fmt.Sprintf("crowd-%d", attempt)
		var mu sync.Mutex
		g := got{remaining: map[int64]int{}}
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range each {
					res, err := l.Allow(t.Context(), rule, key)
					if err != nil {
						t.Errorf("Allow() error = %v", err)
						return
					}
					if res.Allowed {
						mu.Lock()
						g.allowed++
						g.remaining[res.Remaining]++
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		return g
	})
	if g.allowed != rule.Limit {
		t.Errorf("%d goroutines x %d requests: %d allowed, want exactly the limit %d", goroutines, each, g.allowed, rule.Limit)
	}
	// Each allowed request saw its own count: Remaining 299 down to 0, once each.
	for r := range rule.Limit {
		if n := g.remaining[r]; n != 1 {
			t.Errorf("Remaining %d answered %d times, want once", r, n)
		}
	}
}

package ratelimittest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/ratelimit"
)

// A limit that counts only failures (console sign-ins) counts each attempt
// before the work it guards and gives the count back when the attempt
// turns out not to be a failure. These tests hold Release to that.

func release(t *testing.T, l ratelimit.Limiter, rule ratelimit.Rule, key string, counted ratelimit.Result) {
	t.Helper()
	if err := l.Release(t.Context(), rule, key, counted); err != nil {
		t.Fatalf("Release(%q, %q) error = %v", rule.Name, key, err)
	}
}

func testReleaseGivesBack(t *testing.T, l ratelimit.Limiter, clk Clock) {
	rule := ratelimit.Rule{Name: "release", Limit: 3, Window: time.Minute}
	g := inOneWindow(t, clk, rule.Window, func(attempt int) []ratelimit.Result {
		key := fmt.Sprintf("release-%d", attempt)
		calls := requests(t, l, clk, rule, key, int(rule.Limit)+1)
		// The refused request and one allowed one are given back: two
		// counted remain.
		release(t, l, rule, key, calls[len(calls)-1].res)
		release(t, l, rule, key, calls[0].res)
		return withoutReset(requests(t, l, clk, rule, key, 3))
	})
	if diff := cmp.Diff(wantResults(rule, 5)[2:], g); diff != "" {
		t.Errorf("after giving back 2 of 4 requests, results mismatch (-want +got):\n%s", diff)
	}
}

func testReleaseNeverBelowZero(t *testing.T, l ratelimit.Limiter, clk Clock) {
	rule := ratelimit.Rule{Name: "release-floor", Limit: 2, Window: time.Minute}
	g := inOneWindow(t, clk, rule.Window, func(attempt int) []ratelimit.Result {
		key := fmt.Sprintf("floor-%d", attempt)
		c := allow(t, l, clk, rule, key)
		for range 3 {
			release(t, l, rule, key, c.res)
		}
		return withoutReset(requests(t, l, clk, rule, key, int(rule.Limit)+1))
	})
	if diff := cmp.Diff(wantResults(rule, int(rule.Limit)+1), g); diff != "" {
		t.Errorf("one request given back three times, then requests: results mismatch (-want +got):\n%s", diff)
	}
}

// A request counted in a window that has ended is gone with its window:
// giving it back must not give back one of the new window's.
func testReleaseLaterWindow(t *testing.T, l ratelimit.Limiter, clk Clock) {
	a := advancer(t, clk)
	rule := ratelimit.Rule{Name: "release-late", Limit: 2, Window: time.Minute}
	old := allow(t, l, a, rule, "late")
	toNextWindow(a, rule.Window)
	allow(t, l, a, rule, "late")
	release(t, l, rule, "late", old.res)
	if got := allow(t, l, a, rule, "late").res; !got.Allowed || got.Remaining != rule.Limit-2 {
		t.Errorf("second request of the new window after giving back one of the last = %+v, want allowed with %d remaining: "+
			"the new window's count is untouched", got, rule.Limit-2)
	}
}

// Many callers counting and giving back at once never let more than the
// limit hold a count together, and leave nothing counted.
func testConcurrentRelease(t *testing.T, l ratelimit.Limiter, clk Clock) {
	const goroutines, each = 20, 10
	rule := ratelimit.Rule{Name: "reserve", Limit: 5, Window: time.Hour}
	type got struct {
		most int64
		left ratelimit.Result
	}
	g := inOneWindow(t, clk, rule.Window, func(attempt int) got {
		key := fmt.Sprintf("reserve-%d", attempt)
		var mu sync.Mutex
		var held, most int64
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
						held++
						most = max(most, held)
						mu.Unlock()
						// Other callers may count while this one holds.
						mu.Lock()
						held--
						mu.Unlock()
					}
					if err := l.Release(t.Context(), rule, key, res); err != nil {
						t.Errorf("Release() error = %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		c := allow(t, l, clk, rule, key)
		return got{most: most, left: withoutReset([]call{c})[0]}
	})
	if g.most > rule.Limit {
		t.Errorf("%d requests held a count at once, want at most the limit %d", g.most, rule.Limit)
	}
	want := ratelimit.Result{Allowed: true, Limit: rule.Limit, Remaining: rule.Limit - 1}
	if diff := cmp.Diff(want, g.left); diff != "" {
		t.Errorf("a request after every request was given back mismatch (-want +got):\n%s", diff)
	}
}

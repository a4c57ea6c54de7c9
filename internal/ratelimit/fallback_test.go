package ratelimit_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/ratelimit/ratelimittest"
)

// switchable fails while down is set.
type switchable struct {
	ratelimit.Limiter
	down  bool
	calls int
}

func (s *switchable) Allow(ctx context.Context, rule ratelimit.Rule, key string) (ratelimit.Result, error) {
	s.calls++
	if s.down {
		return ratelimit.Result{}, errors.New("connection refused")
	}
	return s.Limiter.Allow(ctx, rule, key)
}

func (s *switchable) Release(ctx context.Context, rule ratelimit.Rule, key string, counted ratelimit.Result) error {
	s.calls++
	if s.down {
		return errors.New("connection refused")
	}
	return s.Limiter.Release(ctx, rule, key, counted)
}

func TestFallbackSuite(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T, clk *clock.Fake) ratelimit.Limiter {
		return ratelimit.NewFallback(ratelimit.NewMemory(clk), ratelimit.NewMemory(clk), clk, slog.New(slog.DiscardHandler), nil)
	})
}

func TestFallbackWhenSharedIsDown(t *testing.T) {
	clk := clock.NewFake(ratelimittest.Start)
	shared := &switchable{Limiter: ratelimit.NewMemory(clk)}
	f := ratelimit.NewFallback(shared, ratelimit.NewMemory(clk), clk, slog.New(slog.DiscardHandler), nil)
	rule := ratelimit.Rule{Name: "t", Limit: 2, Window: time.Hour}
	shared.down = true
	for i, want := range []bool{true, true, false} {
		res, err := f.Allow(t.Context(), rule, "k")
		if err != nil || res.Allowed != want {
			t.Errorf("Allow() #%d while Redis is down = %v, %v; want allowed %v from the local count", i, res.Allowed, err, want)
		}
	}
	if shared.calls != 1 {
		t.Errorf("shared limiter tried %d times within a second of failing, want 1", shared.calls)
	}
	shared.down = false
	clk.Advance(time.Second)
	if _, err := f.Allow(t.Context(), rule, "k"); err != nil {
		t.Fatal(err)
	}
	if shared.calls != 2 {
		t.Errorf("shared limiter tried %d times after a second, want 2", shared.calls)
	}
}

func TestRedisUnreachable(t *testing.T) {
	r, err := ratelimit.NewRedis(ratelimit.RedisOptions{URL: "redis://127.0.0.1:1/0", Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Allow(t.Context(), ratelimit.Admin, "k"); err == nil {
		t.Error("Allow() on a closed port = nil error")
	}
	if r.Ping(t.Context()) == nil {
		t.Error("Ping() on a closed port = nil")
	}
}

// While the shared limiter is down, requests count locally, and the shared
// one is tried again only after a second.
func TestFallbackLocalWhileSharedIsDown(t *testing.T) {
	clk := clock.NewFake(ratelimittest.Start)
	shared := &switchable{Limiter: ratelimit.NewMemory(clk)}
	f := ratelimit.NewFallback(shared, ratelimit.NewMemory(clk), clk, slog.New(slog.DiscardHandler), nil)
	rule := ratelimit.Rule{Name: "t", Limit: 1, Window: time.Hour}
	shared.down = true
	if _, err := f.Allow(t.Context(), rule, "k"); err != nil {
		t.Fatal(err)
	}
	res, err := f.Allow(t.Context(), rule, "k")
	if err != nil || res.Allowed {
		t.Errorf("Allow() past the local limit = %+v, %v; want refused from the local count", res, err)
	}
	if shared.calls != 1 {
		t.Errorf("shared limiter tried %d times within a second of failing, want 1", shared.calls)
	}
}

// Release gives back where Allow counts: the local count while the shared
// limiter is down.
func TestFallbackReleaseWhenSharedIsDown(t *testing.T) {
	clk := clock.NewFake(ratelimittest.Start)
	shared := &switchable{Limiter: ratelimit.NewMemory(clk)}
	f := ratelimit.NewFallback(shared, ratelimit.NewMemory(clk), clk, slog.New(slog.DiscardHandler), nil)
	rule := ratelimit.Rule{Name: "t", Limit: 1, Window: time.Hour}
	shared.down = true
	res, err := f.Allow(t.Context(), rule, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Release(t.Context(), rule, "k", res); err != nil {
		t.Fatal(err)
	}
	if res, err := f.Allow(t.Context(), rule, "k"); err != nil || !res.Allowed {
		t.Errorf("Allow() after the local count was given back = %+v, %v; want allowed", res, err)
	}
}

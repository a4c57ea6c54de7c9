package ratelimit

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/clock"
)

// retryShared is how long the fallback waits before trying the shared
// limiter again after it failed, so an unreachable Redis costs one timeout
// a second rather than one per request.
const retryShared = time.Second

// Fallback counts in a shared limiter and, while it is unreachable, in a
// local one: the service keeps answering and keeps limiting, per process.
// /readyz reports the outage by asking Redis itself.
type Fallback struct {
	shared, local Limiter
	clock         clock.Clock
	log           *slog.Logger

	mu      sync.Mutex
	down    bool
	nextTry time.Time
}

var _ Limiter = (*Fallback)(nil)

// NewFallback returns a Limiter counting in shared, or in local while shared
// fails.
func NewFallback(shared, local Limiter, clk clock.Clock, log *slog.Logger) *Fallback {
	return &Fallback{shared: shared, local: local, clock: clk, log: log}
}

// Allow counts one request.
func (f *Fallback) Allow(ctx context.Context, rule Rule, key string) (Result, error) {
	return f.use(func(l Limiter) (Result, error) { return l.Allow(ctx, rule, key) })
}

// Peek reads a count without adding to it, where Allow would count.
func (f *Fallback) Peek(ctx context.Context, rule Rule, key string) (Result, error) {
	return f.use(func(l Limiter) (Result, error) { return l.Peek(ctx, rule, key) })
}

// Release gives a request back where Allow would count now. A request
// counted just before the shared limiter went down or came back may so be
// given back to the other count, which the switch has already made
// approximate; the window check keeps it from touching a later window.
func (f *Fallback) Release(ctx context.Context, rule Rule, key string, counted Result) error {
	_, err := f.use(func(l Limiter) (Result, error) { return Result{}, l.Release(ctx, rule, key, counted) })
	return err
}

// use runs op on the shared limiter, or on the local one while the shared
// one is down.
func (f *Fallback) use(op func(Limiter) (Result, error)) (Result, error) {
	now := f.clock.Now()
	f.mu.Lock()
	skip := f.down && now.Before(f.nextTry)
	f.mu.Unlock()
	if !skip {
		res, err := op(f.shared)
		f.record(now, err)
		if err == nil {
			return res, nil
		}
	}
	return op(f.local)
}

func (f *Fallback) record(now time.Time, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err == nil && f.down:
		f.down = false
		f.log.Info("shared rate limiter reachable again")
	case err != nil:
		if !f.down {
			f.log.Error("shared rate limiter unreachable; counting per process", "error", err.Error())
		}
		f.down, f.nextTry = true, now.Add(retryShared)
	}
}

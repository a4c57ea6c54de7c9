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

// warnEvery spaces the warnings of an outage: one when it starts, then one
// a minute while it lasts, so a long outage stays in sight without
// filling the log.
const warnEvery = time.Minute

// FallbackObserver learns how a Fallback counts; *metrics.Metrics is one.
type FallbackObserver interface {
	// RateLimiterFallback records whether limits are now counted per
	// process.
	RateLimiterFallback(on bool)
	// RateLimitCountedLocally records one request counted per process.
	RateLimitCountedLocally()
}

// Fallback counts in a shared limiter and, while it is unreachable, in a
// local one: the service keeps answering and keeps limiting, per process.
// /readyz reports the outage by asking Redis itself; the observer and a
// warning a minute in the log report it too.
type Fallback struct {
	shared, local Limiter
	clock         clock.Clock
	log           *slog.Logger
	obs           FallbackObserver

	mu       sync.Mutex
	down     bool
	nextTry  time.Time
	nextWarn time.Time
	// warned is set once the current outage has been logged: its end is
	// logged only then, so a flapping Redis logs at most a pair a minute.
	warned bool
	// localCount is the requests counted per process since the last
	// warning.
	localCount int64
}

var _ Limiter = (*Fallback)(nil)

// NewFallback returns a Limiter counting in shared, or in local while shared
// fails. obs may be nil.
func NewFallback(shared, local Limiter, clk clock.Clock, log *slog.Logger, obs FallbackObserver) *Fallback {
	if obs == nil {
		obs = noObserver{}
	}
	obs.RateLimiterFallback(false)
	return &Fallback{shared: shared, local: local, clock: clk, log: log, obs: obs}
}

// Allow counts one request.
func (f *Fallback) Allow(ctx context.Context, rule Rule, key string) (Result, error) {
	return f.use(true, func(l Limiter) (Result, error) { return l.Allow(ctx, rule, key) })
}

// Release gives a request back where Allow would count now. A request
// counted just before the shared limiter went down or came back may so be
// given back to the other count, which the switch has already made
// approximate; the window check keeps it from touching a later window.
func (f *Fallback) Release(ctx context.Context, rule Rule, key string, counted Result) error {
	_, err := f.use(false, func(l Limiter) (Result, error) { return Result{}, l.Release(ctx, rule, key, counted) })
	return err
}

// use runs op on the shared limiter, or on the local one while the shared
// one is down; counts says whether op counts a request.
func (f *Fallback) use(counts bool, op func(Limiter) (Result, error)) (Result, error) {
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
	if counts {
		f.obs.RateLimitCountedLocally()
		f.mu.Lock()
		f.localCount++
		f.mu.Unlock()
	}
	return op(f.local)
}

func (f *Fallback) record(now time.Time, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		if f.down {
			f.down = false
			f.obs.RateLimiterFallback(false)
			if f.warned {
				f.log.Info("shared rate limiter reachable again")
			}
		}
		return
	}
	if !f.down {
		f.down, f.warned = true, false
		f.obs.RateLimiterFallback(true)
	}
	f.nextTry = now.Add(retryShared)
	if now.Before(f.nextWarn) {
		return
	}
	f.log.Warn("shared rate limiter unreachable; counting per process", "error", err.Error(),
		"counted_per_process", f.localCount)
	f.warned, f.nextWarn, f.localCount = true, now.Add(warnEvery), 0
}

type noObserver struct{}

func (noObserver) RateLimiterFallback(bool) {}
func (noObserver) RateLimitCountedLocally() {}

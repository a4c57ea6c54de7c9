package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/clock"
)

// Memory is a Limiter for one process.
type Memory struct {
	clock     clock.Clock
	mu        sync.Mutex
	count     map[subject]counter
	nextSweep time.Time
}

// subject is what one counter counts: a rule and a key, kept apart so that no
// rule name and key can join into another pair's ("a|b" + "c", "a" + "b|c").
type subject struct{ rule, key string }

type counter struct {
	start int64     // window start, Unix nanoseconds
	end   time.Time // when the window resets
	n     int64
}

var _ Limiter = (*Memory)(nil)

// NewMemory returns an in-memory Limiter.
func NewMemory(clk clock.Clock) *Memory {
	return &Memory{clock: clk, count: make(map[subject]counter)}
}

// Allow counts one request.
func (m *Memory) Allow(_ context.Context, rule Rule, key string) (Result, error) {
	now := m.clock.Now()
	start, left := window(now, rule.Window)
	k := subject{rule.Name, key}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetOld(now)
	c := m.count[k]
	if c.start != start {
		c = counter{start: start, end: now.Add(left)}
	}
	c.n++
	m.count[k] = c
	return result(rule, c.n, left), nil
}

// forgetOld drops counters whose window has reset, at most once a second, so
// the map holds only the subjects seen recently.
func (m *Memory) forgetOld(now time.Time) {
	if now.Before(m.nextSweep) {
		return
	}
	m.nextSweep = now.Add(time.Second)
	for k, c := range m.count {
		if !now.Before(c.end) {
			delete(m.count, k)
		}
	}
}

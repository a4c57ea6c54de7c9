package ratelimit

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/clock"
)

// Memory is a Limiter for one process.
//
// It holds a counter for every subject seen in the current window: at
// thousands of requests a second from distinct client addresses, hundreds
// of thousands. Keys and counters therefore hold no pointers, so the
// garbage collector never scans the map (with string keys it marked every
// entry on every cycle, and the map was most of the live heap).
type Memory struct {
	clock     clock.Clock
	seeds     [2]maphash.Seed
	mu        sync.Mutex
	count     map[subject]counter
	nextSweep int64
}

// subject is what one counter counts: a rule and a key, hashed to 128 bits
// with two seeds of this process. The rule's length is hashed too, so that
// no pair can join into another's ("a|b" + "c", "a" + "b|c"); of n subjects
// in a window, two share a counter with a chance of about n²/2¹²⁹.
type subject [2]uint64

type counter struct {
	start int64 // window start, Unix nanoseconds
	end   int64 // when the window resets, Unix nanoseconds
	n     int64
}

var _ Limiter = (*Memory)(nil)

// NewMemory returns an in-memory Limiter.
func NewMemory(clk clock.Clock) *Memory {
	return &Memory{clock: clk, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, count: make(map[subject]counter)}
}

func (m *Memory) subject(rule, key string) subject {
	return subject{hashOf(m.seeds[0], rule, key), hashOf(m.seeds[1], rule, key)}
}

// hashOf hashes the rule's length before the rule and the key, so that the
// boundary between them is part of what is hashed.
func hashOf(seed maphash.Seed, rule, key string) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(rule)))
	h.Write(n[:])
	h.WriteString(rule)
	h.WriteString(key)
	return h.Sum64()
}

// Allow counts one request.
func (m *Memory) Allow(_ context.Context, rule Rule, key string) (Result, error) {
	now := m.clock.Now()
	start, left := window(now, rule.Window)
	k := m.subject(rule.Name, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetOld(now.UnixNano())
	c := m.count[k]
	if c.start != start {
		c = counter{start: start, end: now.Add(left).UnixNano()}
	}
	c.n++
	m.count[k] = c
	return result(rule, c.n, time.Unix(0, start).UTC(), left), nil
}

// Release takes one from the count of counted's window, if that window is
// still the counter's.
func (m *Memory) Release(_ context.Context, rule Rule, key string, counted Result) error {
	if counted.Start.IsZero() {
		return nil
	}
	k := m.subject(rule.Name, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.count[k]; ok && c.start == counted.Start.UnixNano() && c.n > 0 {
		c.n--
		m.count[k] = c
	}
	return nil
}

// forgetOld drops counters whose window has reset, at most once a second, so
// the map holds only the subjects seen recently.
func (m *Memory) forgetOld(now int64) {
	if now < m.nextSweep {
		return
	}
	m.nextSweep = now + int64(time.Second)
	for k, c := range m.count {
		if now >= c.end {
			delete(m.count, k)
		}
	}
}

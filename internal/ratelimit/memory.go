package ratelimit

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/clock"
)

// Memory is a Limiter for one process.
//
// It holds a counter for every subject seen in a window still running: at
// thousands of requests a second from distinct client addresses, hundreds
// of thousands. Keys and counters therefore hold no pointers, so the
// garbage collector never scans them (with string keys it marked every
// entry on every cycle, and the counters were most of the live heap).
//
// Windows are aligned (window), so every counter of a window ends at the
// same moment: counters are kept by the end of their window, one map an
// end, and a window's counters go together when it ends, with no walk
// over them. Walking them instead, once a second, held the lock, and so
// every request of the process, for about 3 ms among 400,000 counters
// (BenchmarkMemoryAllowAmongMany, BENCHMARKS.md).
type Memory struct {
	clock clock.Clock
	seeds [2]maphash.Seed
	mu    sync.Mutex
	// ends holds the counts of each window by its end, in Unix
	// nanoseconds: the windows still running, and those that ended since
	// the last request. soonest is the earliest of those ends.
	ends    map[int64]map[subject]int64
	soonest int64
}

// subject is what one counter counts: a rule and a key, hashed to 128 bits
// with two seeds of this process. The rule's length is hashed too, so that
// no pair can join into another's ("a|b" + "c", "a" + "b|c"); of n subjects
// in a window, two share a counter with a chance of about n²/2¹²⁹.
type subject [2]uint64

var _ Limiter = (*Memory)(nil)

// NewMemory returns an in-memory Limiter.
func NewMemory(clk clock.Clock) *Memory {
	return &Memory{clock: clk, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		ends: make(map[int64]map[subject]int64), soonest: math.MaxInt64}
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
	end := start + int64(rule.Window)
	k := m.subject(rule.Name, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetEnded(now.UnixNano())
	counts := m.ends[end]
	if counts == nil {
		counts = make(map[subject]int64)
		m.ends[end] = counts
		m.soonest = min(m.soonest, end)
	}
	n := counts[k] + 1
	counts[k] = n
	return result(rule, n, time.Unix(0, start).UTC(), left), nil
}

// Release takes one from the count of counted's window, if that window's
// counts are still kept; a later window's count is never touched
// (ratelimittest's ReleaseInLaterWindowDoesNothing).
func (m *Memory) Release(_ context.Context, rule Rule, key string, counted Result) error {
	if counted.Start.IsZero() {
		return nil
	}
	end := counted.Start.UnixNano() + int64(rule.Window)
	k := m.subject(rule.Name, key)
	m.mu.Lock()
	defer m.mu.Unlock()
	if counts := m.ends[end]; counts[k] > 0 {
		counts[k]--
	}
	return nil
}

// forgetEnded drops the counters of the windows that have ended by now.
func (m *Memory) forgetEnded(now int64) {
	if now < m.soonest {
		return
	}
	m.soonest = math.MaxInt64
	for end := range m.ends {
		if now >= end {
			delete(m.ends, end)
		} else {
			m.soonest = min(m.soonest, end)
		}
	}
}

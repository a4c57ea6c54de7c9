// Package gather sends calls that arrive while others are out together:
// a call that finds a slot free goes at once, alone; one that does not
// waits, and the calls that waited go as one group when a slot frees. It
// is how the PostgreSQL engine sends many status checks' reads in one
// round trip under load, without making an idle service wait for
// anything.
package gather

import (
	"context"
	"slices"
	"sync"
)

// Group gathers calls of type T. Run answers every call of the group it is
// given, the calling goroutine's first.
type Group[T any] struct {
	slots, most int
	run         func(group []*T)

	mu      sync.Mutex
	out     int // calls or groups out
	waiting []*call[T]
}

// New returns a Group with slots calls or groups out at once, groups of at
// most most calls, answered by run.
func New[T any](slots, most int, run func(group []*T)) *Group[T] {
	return &Group[T]{slots: slots, most: most, run: run}
}

type call[T any] struct {
	v *T
	// wake gets nil once v is answered, or the group this call's goroutine
	// is to run, itself first. It gets one of them, once.
	wake chan []*call[T]
}

// Do answers v, alone or in a group. It returns ctx's error, having run
// nothing, when ctx ends while v waits; once v is in a group, Do returns
// when the group is answered.
func (g *Group[T]) Do(ctx context.Context, v *T) error {
	c := &call[T]{v: v}
	g.mu.Lock()
	if g.out < g.slots {
		g.out++
		g.mu.Unlock()
		g.send([]*call[T]{c})
		return nil
	}
	c.wake = make(chan []*call[T], 1)
	g.waiting = append(g.waiting, c)
	g.mu.Unlock()
	select {
	case group := <-c.wake:
		if group != nil {
			g.send(group)
		}
	case <-ctx.Done():
		if g.leave(c) {
			return ctx.Err()
		}
		// In a group already: its answer comes.
		if group := <-c.wake; group != nil {
			g.send(group)
		}
	}
	return nil
}

// Waiting is how many calls wait for a group.
func (g *Group[T]) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiting)
}

// leave takes c out of the waiting calls, and reports whether it was still
// there.
func (g *Group[T]) leave(c *call[T]) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.waiting, c)
	if i < 0 {
		return false
	}
	g.waiting = slices.Delete(g.waiting, i, i+1)
	return true
}

// send runs group, answers its calls, and hands the calls that waited
// meanwhile to the first of them to run. It does both even when run
// panics, so that no call waits for ever.
func (g *Group[T]) send(group []*call[T]) {
	defer g.next(group)
	vs := make([]*T, len(group))
	for i, c := range group {
		vs[i] = c.v
	}
	g.run(vs)
}

// next wakes the calls of group after the first, and hands the waiting
// calls, as many as a group carries, to the first of them to run; with
// none waiting, the slot frees.
func (g *Group[T]) next(group []*call[T]) {
	for _, c := range group[1:] {
		c.wake <- nil
	}
	g.mu.Lock()
	if len(g.waiting) == 0 {
		g.out--
		g.mu.Unlock()
		return
	}
	n := min(len(g.waiting), g.most)
	next := slices.Clone(g.waiting[:n])
	g.waiting = slices.Delete(g.waiting, 0, n)
	g.mu.Unlock()
	next[0].wake <- next
}

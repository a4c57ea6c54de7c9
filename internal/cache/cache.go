// Package cache is a bounded in-memory map for values a process can
// always recompute: once full, storing a new entry evicts an arbitrary one,
// so memory stays bounded whatever the traffic.
package cache

import "sync"

// Map is safe for concurrent use.
type Map[K comparable, V any] struct {
	mu  sync.RWMutex
	m   map[K]V
	max int
}

// New returns a Map holding at most max entries.
func New[K comparable, V any](max int) *Map[K, V] {
	return &Map[K, V]{m: make(map[K]V), max: max}
}

// Get returns the value stored for k.
func (c *Map[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

// Put stores v for k. When the map is full, an arbitrary entry goes (Go
// starts each map iteration at a random place).
func (c *Map[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = v
}

// Delete removes k.
func (c *Map[K, V]) Delete(k K) {
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

// Len is the number of entries.
func (c *Map[K, V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

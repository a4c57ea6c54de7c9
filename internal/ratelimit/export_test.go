package ratelimit

// Counters returns how many counters m holds, so a test can see old ones
// forgotten.
func Counters(m *Memory) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.count)
}

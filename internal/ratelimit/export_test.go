package ratelimit

import "reflect"

// Counters returns how many counters m holds, so a test can see old ones
// forgotten.
func Counters(m *Memory) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, counts := range m.ends {
		n += len(counts)
	}
	return n
}

// CounterTypes are the types of the counters' map keys and values.
var CounterTypes = [2]reflect.Type{reflect.TypeFor[subject](), reflect.TypeFor[int64]()}

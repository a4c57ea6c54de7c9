// Package logtest holds what tests use to read a service's log: a buffer
// its goroutines may write to while the test reads it.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer collects log lines; it is safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

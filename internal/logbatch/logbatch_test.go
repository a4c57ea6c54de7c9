package logbatch

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// recorder records each Write to it; while gate is open (not nil and not
// closed), a Write waits for it to close.
type recorder struct {
	mu     sync.Mutex
	writes []string
	gate   chan struct{}
	wrote  chan struct{} // receives a signal after each Write, if set
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	r.writes = append(r.writes, string(p))
	r.mu.Unlock()
	if r.wrote != nil {
		r.wrote <- struct{}{}
	}
	return len(p), nil
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes...)
}

// TestLinesWholeInOrderAndBatched: lines from many writers at once reach
// out each once, whole, in each writer's order; lines written while out is
// busy share one call.
func TestLinesWholeInOrderAndBatched(t *testing.T) {
	out := &recorder{gate: make(chan struct{})}
	w := New(out)
	const writers, lines = 8, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(w, "writer %d line %d\n", g, i)
			}
		})
	}
	wg.Wait() // every line is waiting or being written: out holds the first batch
	close(out.gate)
	if err := w.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	writes := out.all()
	if len(writes) >= writers*lines {
		t.Errorf("%d lines took %d writes, want fewer", writers*lines, len(writes))
	}
	next := make([]int, writers)
	for _, batch := range writes {
		if !strings.HasSuffix(batch, "\n") {
			t.Fatalf("a write ends part way through a line: %q", batch)
		}
		for _, line := range strings.Split(strings.TrimSuffix(batch, "\n"), "\n") {
			var g, i int
			if _, err := fmt.Sscanf(line, "writer %d line %d", &g, &i); err != nil || g < 0 || g >= writers {
				t.Fatalf("line %q is not one written", line)
			}
			if i != next[g] {
				t.Fatalf("writer %d: line %d came where line %d was due", g, i, next[g])
			}
			next[g]++
		}
	}
	for g, n := range next {
		if n != lines {
			t.Errorf("writer %d: %d lines reached out, want %d", g, n, lines)
		}
	}
}

// TestIdleLineWrittenAtOnce: a line written to an idle Writer reaches out
// without waiting for another line, or for Close.
func TestIdleLineWrittenAtOnce(t *testing.T) {
	out := &recorder{wrote: make(chan struct{}, 16)}
	w := New(out)
	defer w.Close()
	for i := range 3 {
		line := fmt.Sprintf("line %d\n", i)
		w.Write([]byte(line))
		<-out.wrote
		if got := out.all(); got[len(got)-1] != line {
			t.Fatalf("last write to out = %q, want %q", got[len(got)-1], line)
		}
	}
}

// TestWaitingBounded: while out is stalled, the lines waiting stay within
// the bound (a writer past it waits), and all of them arrive once out
// moves again.
func TestWaitingBounded(t *testing.T) {
	out := &recorder{gate: make(chan struct{})}
	w := New(out)
	w.max = 64
	line := []byte(strings.Repeat("x", 15) + "\n")
	const lines = 100
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range lines {
			w.Write(line)
		}
	}()
	for range 1000 {
		w.mu.Lock()
		n := len(w.waiting)
		w.mu.Unlock()
		if n > w.max+len(line) {
			t.Fatalf("%d bytes waiting, over the bound of %d and one line", n, w.max)
		}
	}
	close(out.gate)
	<-done
	if err := w.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	if got := strings.Join(out.all(), ""); got != strings.Repeat(string(line), lines) {
		t.Errorf("out got %d bytes, want %d lines of %d", len(got), lines, len(line))
	}
}

// TestClose: Close writes the lines waiting; a line written after it goes
// straight to out, after them. A second Close does nothing.
func TestClose(t *testing.T) {
	var out bytes.Buffer
	w := New(&out)
	w.Write([]byte("before\n"))
	if err := w.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}
	if out.String() != "before\n" {
		t.Fatalf("after Close, out = %q, want the line written before", out.String())
	}
	w.Write([]byte("after\n"))
	if err := w.Close(); err != nil {
		t.Fatalf("second Close() error = %v", err)
	}
	if out.String() != "before\nafter\n" {
		t.Errorf("out = %q, want both lines in order", out.String())
	}
}

// Package logbatch writes a process's log in batches. Each line written to
// a file or a pipe costs a system call; at thousands of requests a second,
// one access-log line a request made that call a tenth of a status check's
// CPU. A Writer hands each line to one goroutine, which writes everything
// that gathered while it wrote the last batch in one call: idle, a line is
// written at once; busy, lines share calls.
package logbatch

import (
	"io"
	"sync"
)

// maxWaiting bounds the bytes waiting to be written. A Write past it waits
// for the batch being written, as it would wait for out if it wrote there
// itself: a stalled log holds the process back instead of filling memory.
const maxWaiting = 1 << 20

// Writer writes lines to out in batches, each line whole and in the order
// written. Close writes what is waiting; a line written after it goes
// straight to out. A crash of the process loses the lines still waiting,
// those written during the last system call.
type Writer struct {
	out  io.Writer
	max  int
	wake chan struct{} // holds a signal while lines wait
	done chan struct{} // closed when the goroutine has stopped

	mu      sync.Mutex
	room    sync.Cond // signalled when a batch has been written
	waiting []byte
	closed  bool
}

// New returns a Writer to out and starts its goroutine; Close stops it.
func New(out io.Writer) *Writer {
	w := &Writer{out: out, max: maxWaiting, wake: make(chan struct{}, 1), done: make(chan struct{})}
	w.room.L = &w.mu
	go w.run()
	return w
}

// Write queues p, one whole line or more, and returns: it waits only while
// the lines already waiting are over the bound.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	for !w.closed && len(w.waiting) >= w.max {
		w.room.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		<-w.done
		w.mu.Lock()
		defer w.mu.Unlock()
		if err := w.writeWaiting(); err != nil {
			return 0, err
		}
		return w.out.Write(p)
	}
	w.waiting = append(w.waiting, p...)
	select {
	case w.wake <- struct{}{}:
	default: // a signal is already there, for these lines too
	}
	w.mu.Unlock()
	return len(p), nil
}

// run writes the lines waiting, a batch at a time, until Close. Of two
// buffers, one gathers lines while the other is written.
func (w *Writer) run() {
	defer close(w.done)
	var spare []byte
	for range w.wake {
		w.mu.Lock()
		batch := w.waiting
		w.waiting = spare[:0]
		w.mu.Unlock()
		if len(batch) > 0 {
			// A log that cannot be written has nowhere to say so; slog
			// drops the error of a line written directly too.
			w.out.Write(batch)
		}
		w.mu.Lock()
		spare = batch
		if cap(spare) > 2*w.max {
			spare = nil // a burst's buffer is not kept for good
		}
		w.room.Broadcast()
		w.mu.Unlock()
	}
}

// writeWaiting writes the lines left waiting when the goroutine stopped;
// w.mu is held.
func (w *Writer) writeWaiting() error {
	if len(w.waiting) == 0 {
		return nil
	}
	_, err := w.out.Write(w.waiting)
	w.waiting = nil
	return err
}

// Close writes the lines waiting and stops the goroutine.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	close(w.wake)
	w.room.Broadcast()
	w.mu.Unlock()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeWaiting()
}

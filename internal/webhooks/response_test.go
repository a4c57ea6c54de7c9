package webhooks_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// TestWorkerKeepsAnswerStart: a delivery keeps the receiver's status and
// the first 2 KB of its answer, of a failed attempt as of a successful one.
func TestWorkerKeepsAnswerStart(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	ep := q.endpoint(t, "/a")
	q.emit(t, 1)
	q.hooks.status.Store(http.StatusInternalServerError)
	q.hooks.bodySize.Store(5000)
	if n, err := q.worker(q.st, 0).RunOnce(t.Context()); err != nil || n != 1 {
		t.Fatalf("RunOnce() = %d, %v; want 1", n, err)
	}
	d := q.deliveries(t, ep)[0]
	if d.LastStatusCode == nil || *d.LastStatusCode != 500 || d.LastResponse == nil ||
		*d.LastResponse != strings.Repeat("x", licentia.MaxResponseKept) {
		t.Fatalf("delivery after a 500 = status %v, answer of %d bytes; want 500 and the first 2048 bytes",
			d.LastStatusCode, len(deref(d.LastResponse)))
	}

	q.hooks.status.Store(http.StatusOK)
	q.hooks.bodySize.Store(3)
	q.clk.Advance(time.Hour) // past the first retry delay
	if n, err := q.worker(q.st, 0).RunOnce(t.Context()); err != nil || n != 1 {
		t.Fatalf("RunOnce() of the retry = %d, %v; want 1", n, err)
	}
	if d := q.deliveries(t, ep)[0]; d.LastResponse == nil || *d.LastResponse != "xxx" {
		t.Errorf("delivery after a 200 answer = %q, want the new answer", deref(d.LastResponse))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

package webhooks_test

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/webhooks"
)

// memoryReceiver answers deliveries in memory, so that Run can be driven
// in a synctest bubble. Requests to a held path wait until it is released
// or their attempt ends.
type memoryReceiver struct {
	mu     sync.Mutex
	counts map[string]int // path + " " + webhook-id
	held   map[string]chan struct{}
	// budgets are the times the requests had left, as they arrived, before
	// their attempts' deadlines.
	budgets []time.Duration
}

func (m *memoryReceiver) RoundTrip(r *http.Request) (*http.Response, error) {
	m.mu.Lock()
	m.counts[r.URL.Path+" "+r.Header.Get("webhook-id")]++
	if deadline, ok := r.Context().Deadline(); ok {
		m.budgets = append(m.budgets, time.Until(deadline))
	}
	held := m.held[r.URL.Path]
	m.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
}

// hold makes requests to path wait until release is called; after it, they
// are answered at once.
func (m *memoryReceiver) hold(path string) (release func()) {
	c := make(chan struct{})
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held[path] = c
	return sync.OnceFunc(func() { close(c) })
}

// sent returns how many requests reached path, and the most any one
// webhook-id got there.
func (m *memoryReceiver) sent(path string) (n, most int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, c := range m.counts {
		if strings.HasPrefix(k, path+" ") {
			n += c
			most = max(most, c)
		}
	}
	return n, most
}

// newMemoryQueue is newQueue for a synctest bubble: the store is opened in
// the bubble and deliveries go to a memoryReceiver.
func newMemoryQueue(t *testing.T) (*queue, *memoryReceiver) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "licentia.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	t.Cleanup(func() { st.Close() })
	rcv := &memoryReceiver{counts: map[string]int{}, held: map[string]chan struct{}{}}
	q := &queue{path: path, st: st, clk: clock.NewFake(signedAt), keys: signing.NewKeyring(newMaster(t)),
		client: &http.Client{Transport: rcv}}
	q.svc = admin.New(admin.Options{Store: st, Clock: q.clk, Plans: licentia.DefaultPlans(), Keys: q.keys,
		BaseURL: workerBaseURL, Logger: slog.New(slog.DiscardHandler)})
	q.org, err = q.svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Acme", Slug: "acme", Plan: licentia.PlanBusiness, OwnerEmail: "owner@acme.example"})
	if err != nil {
		t.Fatalf("CreateOrganization() error = %v", err)
	}
	return q, rcv
}

// run starts Run on w and returns a function that stops it and returns
// Run's error.
func run(t *testing.T, w *webhooks.Worker) (stop func() error) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// wantDeliveries fails unless every delivery of ep has status, after
// attempts attempts.
func wantDeliveries(t *testing.T, q *queue, ep *licentia.WebhookEndpoint, n int, status licentia.DeliveryStatus, attempts int) {
	t.Helper()
	ds := q.deliveries(t, ep)
	if len(ds) != n {
		t.Errorf("%s has %d deliveries, want %d", ep.URL, len(ds), n)
	}
	for _, d := range ds {
		if d.Status != status || d.Attempts != attempts {
			t.Errorf("delivery %s to %s = %s after %d attempts, want %s after %d", d.ID, ep.URL, d.Status, d.Attempts, status, attempts)
		}
	}
}

// TestRunSendsEachOnce: Run sends every due delivery once and records it,
// in batches smaller than the queue; once the queue is empty it waits
// Poll, then sends what came meanwhile.
func TestRunSendsEachOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, rcv := newMemoryQueue(t)
		one, two := q.endpoint(t, "/one"), q.endpoint(t, "/two")
		q.emit(t, 30)
		stop := run(t, webhooks.NewWorker(webhooks.WorkerOptions{Store: q.st, Clock: q.clk, Keys: q.keys, Client: q.client,
			BaseURL: workerBaseURL, Logger: slog.New(slog.DiscardHandler), Batch: 7, Poll: time.Second}))
		synctest.Wait()
		for _, path := range []string{"/one", "/two"} {
			if n, most := rcv.sent(path); n != 30 || most != 1 {
				t.Errorf("%s got %d requests, at most %d of one id; want 30, each once", path, n, most)
			}
		}
		wantDeliveries(t, q, one, 30, licentia.DeliverySucceeded, 1)
		wantDeliveries(t, q, two, 30, licentia.DeliverySucceeded, 1)

		q.emit(t, 2)
		time.Sleep(time.Second - time.Nanosecond)
		synctest.Wait()
		if n, _ := rcv.sent("/one"); n != 30 {
			t.Errorf("/one got %d requests before the poll, want 30", n)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if n, most := rcv.sent("/one"); n != 32 || most != 1 {
			t.Errorf("/one got %d requests after the poll, at most %d of one id; want 32, each once", n, most)
		}
		if err := stop(); err != nil {
			t.Errorf("Run() error = %v", err)
		}
		wantDeliveries(t, q, two, 32, licentia.DeliverySucceeded, 1)
	})
}

// TestRunSlowReceiver: an attempt to a receiver that does not answer holds
// only its own sender: deliveries claimed with it, and after it, to other
// receivers are sent and recorded meanwhile.
func TestRunSlowReceiver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, rcv := newMemoryQueue(t)
		slow, fast := q.endpoint(t, "/slow"), q.endpoint(t, "/fast")
		release := rcv.hold("/slow")
		q.emit(t, 3)
		stop := run(t, webhooks.NewWorker(webhooks.WorkerOptions{Store: q.st, Clock: q.clk, Keys: q.keys, Client: q.client,
			BaseURL: workerBaseURL, Logger: slog.New(slog.DiscardHandler), Batch: 2, Senders: 4}))
		synctest.Wait()
		if n, _ := rcv.sent("/slow"); n != 3 {
			t.Errorf("/slow got %d requests, want 3 waiting for an answer", n)
		}
		wantDeliveries(t, q, fast, 3, licentia.DeliverySucceeded, 1)
		wantDeliveries(t, q, slow, 3, licentia.DeliveryPending, 0)

		release()
		synctest.Wait()
		wantDeliveries(t, q, slow, 3, licentia.DeliverySucceeded, 1)
		if err := stop(); err != nil {
			t.Errorf("Run() error = %v", err)
		}
	})
}

// TestRunStop: stopping Run cuts the attempts in flight and records none of
// them, as a crash would; what finished before is recorded. The cut
// deliveries stay leased, and are sent again once the lease ends.
func TestRunStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, rcv := newMemoryQueue(t)
		slow, fast := q.endpoint(t, "/slow"), q.endpoint(t, "/fast")
		release := rcv.hold("/slow")
		q.emit(t, 2)
		w := webhooks.NewWorker(webhooks.WorkerOptions{Store: q.st, Clock: q.clk, Keys: q.keys, Client: q.client,
			BaseURL: workerBaseURL, Logger: slog.New(slog.DiscardHandler)})
		stop := run(t, w)
		synctest.Wait()
		if err := stop(); err != nil {
			t.Errorf("Run() error = %v", err)
		}
		wantDeliveries(t, q, fast, 2, licentia.DeliverySucceeded, 1)
		wantDeliveries(t, q, slow, 2, licentia.DeliveryPending, 0)

		if n, err := w.RunOnce(t.Context()); err != nil || n != 0 {
			t.Errorf("RunOnce() while the lease runs = %d, %v; want 0", n, err)
		}
		release()
		q.clk.Advance(15 * time.Second)
		if n, err := w.RunOnce(t.Context()); err != nil || n != 2 {
			t.Errorf("RunOnce() after the lease = %d, %v; want 2", n, err)
		}
		wantDeliveries(t, q, slow, 2, licentia.DeliverySucceeded, 1)
		if n, most := rcv.sent("/slow"); n != 4 || most != 2 {
			t.Errorf("/slow got %d requests, at most %d of one id; want each of 2 twice", n, most)
		}
	})
}

// slowClaimStore makes the worker's clock move while it claims: wait as
// the claim's transaction waits for the write lock, before it begins (once,
// for the first transaction), and commit between the claim and its commit,
// as a busy database would take.
type slowClaimStore struct {
	store.Store
	clk          *clock.Fake
	wait, commit time.Duration
	waited       bool
}

func (s *slowClaimStore) InTx(ctx context.Context, fn func(store.Tx) error) error {
	if !s.waited {
		s.waited = true
		s.clk.Advance(s.wait)
	}
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(slowClaimTx{Tx: tx, s: s}) })
}

type slowClaimTx struct {
	store.Tx
	s *slowClaimStore
}

func (t slowClaimTx) ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]licentia.Delivery, error) {
	ds, err := t.Tx.ClaimDeliveries(ctx, now, leaseUntil, limit)
	t.s.clk.Advance(t.s.commit)
	return ds, err
}

// TestAttemptEndsBeforeLease: an attempt gets AttemptTimeout (5 seconds)
// for all of it, cut so that it ends 5 seconds before its 15-second lease
// at the latest, by the worker's clock: no other process can claim the
// delivery while it still runs. Waiting for the write lock does not use
// the lease up; a claim that took so long that no time is left sends
// nothing, and the delivery goes once the lease ends. The receiver never
// answers, so each attempt runs to its deadline and fails as a timeout.
func TestAttemptEndsBeforeLease(t *testing.T) {
	for _, tt := range []struct {
		name         string
		wait, commit time.Duration
		budget       time.Duration // 0: nothing sent
	}{
		{"prompt claim", 0, 0, 5 * time.Second},
		{"claim waits for the write lock", 8 * time.Second, 0, 5 * time.Second},
		{"claim commits 5 s late", 0, 5 * time.Second, 5 * time.Second},
		{"claim commits 8 s late", 0, 8 * time.Second, 2 * time.Second},
		{"claim commits 10 s late", 0, 10 * time.Second, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q, rcv := newMemoryQueue(t)
				ep := q.endpoint(t, "/silent")
				rcv.hold("/silent")
				q.emit(t, 1)
				slow := &slowClaimStore{Store: q.st, clk: q.clk, wait: tt.wait, commit: tt.commit}
				w := webhooks.NewWorker(webhooks.WorkerOptions{Store: slow, Clock: q.clk, Keys: q.keys, Client: q.client,
					BaseURL: workerBaseURL, Logger: slog.New(slog.DiscardHandler)})
				if n, err := w.RunOnce(t.Context()); err != nil || n != 1 {
					t.Fatalf("RunOnce() = %d, %v; want 1", n, err)
				}
				d := q.deliveries(t, ep)[0]
				if tt.budget == 0 {
					if len(rcv.budgets) != 0 || d.Attempts != 0 {
						t.Errorf("budgets %v, delivery after %d attempts; want nothing sent or recorded", rcv.budgets, d.Attempts)
					}
					next := q.worker(q.st, 0)
					q.clk.Advance(4*time.Second + 999*time.Millisecond)
					if n, err := next.RunOnce(t.Context()); err != nil || n != 0 {
						t.Errorf("RunOnce() before the lease ends = %d, %v; want 0", n, err)
					}
					q.clk.Advance(time.Millisecond)
					if n, err := next.RunOnce(t.Context()); err != nil || n != 1 {
						t.Errorf("RunOnce() after the lease = %d, %v; want 1", n, err)
					}
					if want := []time.Duration{webhooks.AttemptTimeout}; !slices.Equal(rcv.budgets, want) {
						t.Errorf("budgets after the lease = %v, want %v", rcv.budgets, want)
					}
					return
				}
				if want := []time.Duration{tt.budget}; !slices.Equal(rcv.budgets, want) {
					t.Errorf("budgets = %v, want %v", rcv.budgets, want)
				}
				if d.Attempts != 1 || d.FailureReason == nil || *d.FailureReason != licentia.FailureTimeout {
					t.Errorf("delivery = %+v, want one attempt failed with timeout", d)
				}
			})
		})
	}
}

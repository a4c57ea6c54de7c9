package webhooks_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/sqlite"
	"github.com/licentia/licentia/internal/webhooks"
)

const workerBaseURL = "https://licentia.example.org"

// queue is a store with an organization, a TLS receiver on loopback that
// hooks.example.com is pinned to, and what a worker needs to reach it.
type queue struct {
	path   string // the database file
	st     store.Store
	clk    *clock.Fake
	keys   *signing.Keyring
	svc    *admin.Service
	org    *licentia.Organization
	client *http.Client
	hooks  *countingReceiver
}

func newQueue(t *testing.T) *queue {
	t.Helper()
	path := filepath.Join(t.TempDir(), "licentia.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	t.Cleanup(func() { st.Close() })
	q := &queue{path: path, st: st, clk: clock.NewFake(signedAt), keys: signing.NewKeyring(newMaster(t)), hooks: newCountingReceiver(t)}
	q.svc = admin.New(admin.Options{Store: st, Clock: q.clk, Plans: licentia.DefaultPlans(), Keys: q.keys,
		BaseURL: workerBaseURL, Logger: slog.New(slog.DiscardHandler)})
	q.org, err = q.svc.CreateOrganization(t.Context(), licentia.OperatorActor, admin.NewOrganization{
		Name: "Acme", Slug: "acme", Plan: licentia.PlanBusiness, OwnerEmail: "owner@acme.example"})
	if err != nil {
		t.Fatalf("CreateOrganization() error = %v", err)
	}
	pins, err := webhooks.ParsePins([]string{"hooks.example.com:443:" + q.hooks.srv.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(q.hooks.srv.Certificate())
	q.client = webhooks.NewHTTPClient(&webhooks.Dialer{Pins: pins, Resolver: &fakeResolver{}}, pool, workerBaseURL)
	return q
}

// worker returns a new worker on the queue's store, as another process
// would run, claiming batch deliveries a step.
func (q *queue) worker(st store.Store, batch int) *webhooks.Worker {
	return webhooks.NewWorker(webhooks.WorkerOptions{Store: st, Clock: q.clk, Keys: q.keys, Client: q.client,
		BaseURL: workerBaseURL, Logger: slog.New(slog.DiscardHandler), Batch: batch})
}

// endpoint adds an endpoint at https://hooks.example.com/path for
// licence.issued.
func (q *queue) endpoint(t *testing.T, path string) *licentia.WebhookEndpoint {
	t.Helper()
	u := "https://hooks.example.com" + path
	e, _, err := q.svc.AddWebhookEndpoint(t.Context(), licentia.OperatorActor, q.org.ID, admin.CreateWebhookEndpoint{
		URL: &u, EventTypes: []licentia.EventType{licentia.EventLicenceIssued}})
	if err != nil {
		t.Fatalf("AddWebhookEndpoint() error = %v", err)
	}
	return e
}

// emit writes n licence.issued events a millisecond apart, each in its own
// transaction, as issuing n licences would; each queues a delivery per
// endpoint. The clock ends on the last.
func (q *queue) emit(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		if i > 0 {
			q.clk.Advance(time.Millisecond)
		}
		now := q.clk.Now()
		l := &licentia.Licence{ID: licentia.NewID(), OrgID: q.org.ID, ProductID: "desk-app", Email: "ada@example.com",
			IssuedAt: now, LimitKind: licentia.LimitSeats, LimitCount: 1, Major: 1, Status: licentia.StatusActive,
			Source: licentia.SourceAdmin, CreatedAt: now, UpdatedAt: now}
		err := q.st.InTx(t.Context(), func(tx store.Tx) error {
			_, err := events.Write(t.Context(), tx, licentia.EventLicenceIssued, now, l, nil)
			return err
		})
		if err != nil {
			t.Fatalf("events.Write() error = %v", err)
		}
	}
}

// deliveries returns an endpoint's deliveries, newest first.
func (q *queue) deliveries(t *testing.T, ep *licentia.WebhookEndpoint) []licentia.Delivery {
	t.Helper()
	ds, err := q.st.Deliveries(t.Context(), q.org.ID, ep.ID, nil, 1000)
	if err != nil {
		t.Fatalf("Deliveries() error = %v", err)
	}
	return ds
}

// countingReceiver counts the requests for each path and webhook-id, and
// the connections made to it, and answers status with a body of bodySize
// bytes. The next request to a held path waits, after being counted, until
// released or done.
type countingReceiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	counts   map[string]int // path + " " + webhook-id
	conns    int
	held     map[string]chan struct{}
	releases []func()
	arrived  chan string
	status   atomic.Int32
	bodySize atomic.Int32
}

func newCountingReceiver(t *testing.T) *countingReceiver {
	t.Helper()
	rc := &countingReceiver{counts: map[string]int{}, held: map[string]chan struct{}{}, arrived: make(chan string, 1000)}
	rc.status.Store(http.StatusOK)
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.counts[r.URL.Path+" "+r.Header.Get("webhook-id")]++
		release := rc.held[r.URL.Path]
		delete(rc.held, r.URL.Path)
		rc.mu.Unlock()
		rc.arrived <- r.URL.Path
		if release != nil {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		size := int(rc.bodySize.Load())
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.WriteHeader(int(rc.status.Load()))
		w.Write(bytes.Repeat([]byte("x"), size))
	}))
	rc.srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			rc.mu.Lock()
			rc.conns++
			rc.mu.Unlock()
		}
	}
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	// Cleanups run last first: held requests end before Close waits.
	t.Cleanup(func() {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, release := range rc.releases {
			release()
		}
	})
	return rc
}

// hold makes the next request to path wait until release is called.
func (rc *countingReceiver) hold(path string) (release func()) {
	c := make(chan struct{})
	release = sync.OnceFunc(func() { close(c) })
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.held[path] = c
	rc.releases = append(rc.releases, release)
	return release
}

// connections returns how many connections were made to the receiver.
func (rc *countingReceiver) connections() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.conns
}

// total returns how many requests arrived, and the most any one path and
// webhook-id pair got.
func (rc *countingReceiver) total() (n, most int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, c := range rc.counts {
		n += c
		most = max(most, c)
	}
	return n, most
}

// TestWorkerRestart: a worker that claims a delivery and stops before
// recording its attempt (a crash, or serve shutting down mid-request)
// leaves it leased; no other worker sends it until the lease ends, 15
// seconds after the claim, and then another worker does.
func TestWorkerRestart(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	ep := q.endpoint(t, "/a")
	q.emit(t, 1)
	release := q.hooks.hold("/a")

	ctx, stop := context.WithCancel(t.Context())
	crashed := make(chan error, 1)
	go func() {
		_, err := q.worker(q.st, 0).RunOnce(ctx)
		crashed <- err
	}()
	<-q.hooks.arrived
	stop()
	if err := <-crashed; err != nil {
		t.Fatalf("RunOnce() of the stopped worker error = %v", err)
	}
	release()
	d := q.deliveries(t, ep)[0]
	if d.Status != licentia.DeliveryPending || d.Attempts != 0 || d.LastAttemptAt != nil {
		t.Errorf("delivery after the crash = %+v, want pending with no attempt recorded", d)
	}

	next := q.worker(q.st, 0)
	if n, err := next.RunOnce(t.Context()); err != nil || n != 0 {
		t.Errorf("RunOnce() while the lease runs = %d, %v; want 0", n, err)
	}
	q.clk.Advance(15*time.Second - time.Millisecond)
	if n, err := next.RunOnce(t.Context()); err != nil || n != 0 {
		t.Errorf("RunOnce() before the lease ends = %d, %v; want 0", n, err)
	}
	q.clk.Advance(time.Millisecond)
	if n, err := next.RunOnce(t.Context()); err != nil || n != 1 {
		t.Fatalf("RunOnce() after the lease = %d, %v; want 1", n, err)
	}
	d = q.deliveries(t, ep)[0]
	if d.Status != licentia.DeliverySucceeded || d.Attempts != 1 || d.LastStatusCode == nil || *d.LastStatusCode != 200 {
		t.Errorf("delivery after the restart = %+v, want succeeded after 1 attempt", d)
	}
	if n, most := q.hooks.total(); n != 2 || most != 2 {
		t.Errorf("receiver got %d requests (at most %d of one id), want the interrupted one and the new one", n, most)
	}
}

// TestWorkerLateAttempt: when an attempt outlives its lease (a process
// paused past it), another worker takes the delivery over, and the late
// attempt's outcome does not overwrite the one recorded since.
func TestWorkerLateAttempt(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	ep := q.endpoint(t, "/late")
	q.emit(t, 1)
	release := q.hooks.hold("/late")

	late := make(chan error, 1)
	go func() {
		_, err := q.worker(q.st, 0).RunOnce(t.Context())
		late <- err
	}()
	<-q.hooks.arrived
	q.clk.Advance(15 * time.Second)
	if n, err := q.worker(q.st, 0).RunOnce(t.Context()); err != nil || n != 1 {
		t.Fatalf("RunOnce() of the second worker after the lease = %d, %v; want 1", n, err)
	}
	q.hooks.status.Store(http.StatusInternalServerError)
	release()
	if err := <-late; err != nil {
		t.Fatalf("RunOnce() of the late worker error = %v", err)
	}
	d := q.deliveries(t, ep)[0]
	if d.Status != licentia.DeliverySucceeded || d.Attempts != 1 || d.FailureReason != nil || *d.LastStatusCode != 200 {
		t.Errorf("delivery = %+v, want the second worker's success kept", d)
	}
	if n, most := q.hooks.total(); n != 2 || most != 2 {
		t.Errorf("receiver got %d requests, want the late one and the second worker's", n)
	}
}

// TestWorkersShareQueue: workers on one store, stepping at once over the
// same due deliveries, send each exactly once.
func TestWorkersShareQueue(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	eps := []*licentia.WebhookEndpoint{q.endpoint(t, "/one"), q.endpoint(t, "/two")}
	q.emit(t, 30)
	// Each worker has its own store connection, as another process would.
	other, err := sqlite.Open(t.Context(), q.path)
	if err != nil {
		t.Fatalf("sqlite.Open() error = %v", err)
	}
	t.Cleanup(func() { other.Close() })
	workers := []*webhooks.Worker{q.worker(q.st, 7), q.worker(q.st, 7), q.worker(other, 7), q.worker(other, 7)}

	ready := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			<-ready
			for {
				n, err := w.RunOnce(t.Context())
				if err != nil {
					t.Errorf("RunOnce() error = %v", err)
					return
				}
				if n == 0 {
					return
				}
			}
		})
	}
	close(ready)
	wg.Wait()

	n, most := q.hooks.total()
	if n != 60 || most != 1 {
		t.Errorf("receiver got %d requests, at most %d of one endpoint and id; want 60, each once", n, most)
	}
	for _, ep := range eps {
		for _, d := range q.deliveries(t, ep) {
			if d.Status != licentia.DeliverySucceeded || d.Attempts != 1 {
				t.Errorf("delivery %s = %s after %d attempts, want succeeded after 1", d.ID, d.Status, d.Attempts)
			}
		}
	}
}

// TestWorkerKeepsConnections: attempts to a receiver share a connection
// when its answer is short: the worker reads a short body to its end and
// throws it away, so the connection can carry the next attempt. A longer
// body is left unread, and its connection closed.
func TestWorkerKeepsConnections(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	ep := q.endpoint(t, "/kept")
	w := q.worker(q.st, 1)
	sent := 0
	for _, tt := range []struct {
		body, wantConns int
	}{{0, 1}, {7, 1}, {4096, 1}, {4097, 5}} {
		q.client.CloseIdleConnections()
		q.hooks.bodySize.Store(int32(tt.body))
		before := q.hooks.connections()
		q.emit(t, 5)
		for range 5 {
			if n, err := w.RunOnce(t.Context()); err != nil || n != 1 {
				t.Fatalf("RunOnce() = %d, %v; want 1", n, err)
			}
		}
		sent += 5
		if got := q.hooks.connections() - before; got != tt.wantConns {
			t.Errorf("answers of %d bytes: 5 attempts made %d connections, want %d", tt.body, got, tt.wantConns)
		}
	}
	ds := q.deliveries(t, ep)
	if len(ds) != sent {
		t.Errorf("%d deliveries, want %d", len(ds), sent)
	}
	for _, d := range ds {
		if d.Status != licentia.DeliverySucceeded || d.Attempts != 1 {
			t.Errorf("delivery %s = %s after %d attempts, want succeeded after 1", d.ID, d.Status, d.Attempts)
		}
	}
}

// flakyStore fails reads of events, in its transactions too, while broken
// is set.
type flakyStore struct {
	store.Store
	broken atomic.Bool
}

var errStoreDown = errors.New("database is unavailable")

func (s *flakyStore) InTx(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(flakyTx{Tx: tx, s: s}) })
}

type flakyTx struct {
	store.Tx
	s *flakyStore
}

func (t flakyTx) Event(ctx context.Context, id string) (*licentia.Event, error) {
	if t.s.broken.Load() {
		return nil, errStoreDown
	}
	return t.Tx.Event(ctx, id)
}

// TestWorkerStoreDown: an event that cannot be read for a while is not a
// failed delivery: the claim fails and is undone, so nothing is sent,
// recorded or leased, and the delivery is sent as soon as the store
// answers again.
func TestWorkerStoreDown(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	ep := q.endpoint(t, "/flaky")
	q.emit(t, 1)
	flaky := &flakyStore{Store: q.st}
	flaky.broken.Store(true)
	w := q.worker(flaky, 0)
	if n, err := w.RunOnce(t.Context()); !errors.Is(err, errStoreDown) || n != 0 {
		t.Fatalf("RunOnce() = %d, %v; want 0 and %v", n, err, errStoreDown)
	}
	d := q.deliveries(t, ep)[0]
	if d.Status != licentia.DeliveryPending || d.Attempts != 0 || d.FailureReason != nil {
		t.Errorf("delivery while the store is down = %+v, want pending with nothing recorded", d)
	}
	if n, _ := q.hooks.total(); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}
	flaky.broken.Store(false)
	if n, err := w.RunOnce(t.Context()); err != nil || n != 1 {
		t.Fatalf("RunOnce() once the store answers = %d, %v; want 1", n, err)
	}
	if d := q.deliveries(t, ep)[0]; d.Status != licentia.DeliverySucceeded || d.Attempts != 1 {
		t.Errorf("delivery = %+v, want succeeded after 1 attempt", d)
	}
}

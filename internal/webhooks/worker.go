package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// lease is how long a claimed delivery is kept from other processes; a
// delivery whose process crashed is sent again once it ends, so it is kept
// short: an attempt (AttemptTimeout), time for the claim to commit, and
// leaseMargin.
const lease = 15 * time.Second

// leaseMargin is how long before its lease ends an attempt is cut at the
// latest, measured on the worker's clock: another process may claim the
// delivery from then on, and its clock may run a little ahead. So an
// attempt still running is never sent again.
const leaseMargin = 5 * time.Second

// recordTimeout bounds the transaction that records finished attempts. It
// is not cut short when the worker stops: an attempt the receiver answered
// is worth recording, or it would be sent again once its lease ends.
const recordTimeout = 10 * time.Second

// maxGroup is the most finished attempts Run records in one transaction.
const maxGroup = 200

// Worker sends due deliveries. Several workers, in one process or many,
// share the queue: each claims deliveries under a lease first.
type Worker struct {
	store     store.Store
	clock     clock.Clock
	keys      *signing.Keyring
	client    *http.Client
	userAgent string
	log       *slog.Logger
	metrics   *metrics.Metrics
	batch     int
	senders   int
	poll      time.Duration
}

// WorkerOptions are the dependencies of a Worker.
type WorkerOptions struct {
	Store  store.Store
	Clock  clock.Clock
	Keys   *signing.Keyring
	Client *http.Client
	// BaseURL is LICENTIA_BASE_URL, named in the User-Agent.
	BaseURL string
	Logger  *slog.Logger
	// Batch is how many deliveries one claim takes; 32 by default.
	Batch int
	// Senders is how many attempts Run has in flight at most; twice Batch
	// by default, so that a batch is claimed while the last one is sent.
	// Keep it within MaxIdleConnsPerHost, or connections to a busy
	// receiver are closed after each attempt instead of kept.
	Senders int
	// Poll is how long Run waits before claiming again when nothing was
	// due; 250 ms by default.
	Poll time.Duration
	// Metrics counts the outcomes of attempts once recorded; nil counts
	// nothing.
	Metrics *metrics.Metrics
}

// NewWorker returns a Worker.
func NewWorker(o WorkerOptions) *Worker {
	if o.Batch == 0 {
		o.Batch = 32
	}
	if o.Senders < o.Batch {
		o.Senders = 2 * o.Batch
	}
	if o.Poll == 0 {
		o.Poll = 250 * time.Millisecond
	}
	return &Worker{store: o.Store, clock: o.Clock, keys: o.Keys, client: o.Client,
		userAgent: UserAgent(o.BaseURL), log: o.Logger, metrics: o.Metrics, batch: o.Batch, senders: o.Senders, poll: o.Poll}
}

// finished is an attempt's outcome, written into its delivery, waiting to
// be recorded.
type finished struct {
	d     licentia.Delivery
	at    time.Time
	spent bool // retries spent: the endpoint may have to be turned off
}

// RunOnce claims a batch of due deliveries, sends them concurrently and
// records their outcomes in one transaction. It reports how many it
// claimed. It is one step of Run, for tests: Run does the same without
// waiting for a batch's slowest attempt before claiming more.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	attempts, err := w.claim(ctx, w.batch)
	if err != nil || len(attempts) == 0 {
		return 0, err
	}
	out := make([]*finished, len(attempts))
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Go(func() { out[i] = w.send(ctx, &attempts[i]) })
	}
	wg.Wait()
	var done []finished
	for _, f := range out {
		if f != nil {
			done = append(done, *f)
		}
	}
	if err := w.record(ctx, done); err != nil {
		return len(attempts), err
	}
	return len(attempts), nil
}

// Run sends due deliveries until ctx is done. It claims a batch whenever a
// batch of its senders is free, so an attempt to a slow receiver holds
// only its own sender, never the rest of its batch; it records finished
// attempts in groups, one transaction for all that finished meanwhile; and
// when fewer than a batch were due it waits Poll before claiming again.
// Stopping leaves the attempts then in flight unrecorded, as a crash
// would: they are sent again once their lease ends. Run returns nil when
// ctx is done, or the error of a failed claim, after its attempts in
// flight have ended and the finished ones are recorded.
func (w *Worker) Run(ctx context.Context) error {
	results := make(chan finished, w.senders)
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		w.recordAll(ctx, results)
	}()
	free := make(chan struct{}, w.senders)
	for range w.senders {
		free <- struct{}{}
	}
	var wg sync.WaitGroup
	err := w.feed(ctx, free, results, &wg)
	wg.Wait()
	close(results)
	<-recorded
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// feed claims batches for free senders and starts their attempts, until
// ctx is done or a claim fails.
func (w *Worker) feed(ctx context.Context, free chan struct{}, results chan<- finished, wg *sync.WaitGroup) error {
	for {
		for range w.batch {
			select {
			case <-free:
			case <-ctx.Done():
				return nil
			}
		}
		attempts, err := w.claim(ctx, w.batch)
		for range w.batch - len(attempts) {
			free <- struct{}{}
		}
		if err != nil {
			return err
		}
		for i := range attempts {
			wg.Go(func() {
				defer func() { free <- struct{}{} }()
				if f := w.send(ctx, &attempts[i]); f != nil {
					results <- *f
				}
			})
		}
		if len(attempts) == w.batch {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(w.poll):
		}
	}
}

// recordAll records what arrives on results until it is closed, each time
// all that has finished meanwhile in one transaction: under load one
// commit records many attempts.
func (w *Worker) recordAll(ctx context.Context, results <-chan finished) {
	for f := range results {
		group := []finished{f}
	more:
		for len(group) < maxGroup {
			select {
			case f, ok := <-results:
				if !ok {
					break more
				}
				group = append(group, f)
			default:
				break more
			}
		}
		if err := w.record(ctx, group); err != nil {
			// The deliveries stay leased and are sent again when their
			// leases end, as after a crash.
			w.log.Error("delivery attempts not recorded", "deliveries", len(group), "error", err.Error())
		}
	}
}

// claim leases up to n due deliveries and reads what their attempts need.
// The lease starts once the transaction has begun, so that waiting for
// the database's write lock does not use it up.
func (w *Worker) claim(ctx context.Context, n int) ([]attempt, error) {
	var attempts []attempt
	err := w.store.InTx(ctx, func(tx store.Tx) error {
		now := w.clock.Now().UTC().Truncate(time.Millisecond)
		ds, err := tx.ClaimDeliveries(ctx, now, now.Add(lease), n)
		if err != nil {
			return err
		}
		attempts, err = prepare(ctx, tx, ds)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	return attempts, nil
}

// send makes one attempt and returns its outcome to record, or nil when
// the attempt was cut short by ctx (the process stopping) or its lease
// had no room left for it: the delivery then stays leased and is tried
// again once the lease ends, as after a crash.
func (w *Worker) send(ctx context.Context, a *attempt) *finished {
	budget := w.budget(&a.d)
	if budget <= 0 {
		w.log.Warn("delivery claim used up its lease; it is sent once the lease ends", "delivery_id", a.d.ID)
		return nil
	}
	code, reason, final := w.attempt(ctx, a, budget)
	if ctx.Err() != nil {
		return nil
	}
	now := w.clock.Now().UTC().Truncate(time.Millisecond)
	d := a.d
	d.Attempts++
	d.LastAttemptAt, d.LastStatusCode, d.FailureReason, d.LastResponse = &now, code, reason, a.response
	switch {
	case reason == nil:
		d.Status, d.NextAttemptAt = licentia.DeliverySucceeded, nil
	case final:
		d.Status, d.NextAttemptAt = licentia.DeliveryFailed, nil
	default:
		next, ok := nextAttempt(d.Attempts, now)
		d.Status, d.NextAttemptAt = licentia.DeliveryPending, &next
		if !ok {
			d.Status, d.NextAttemptAt = licentia.DeliveryFailed, nil
		}
	}
	return &finished{d: d, at: now, spent: d.Status == licentia.DeliveryFailed && !final}
}

// budget is how long the attempt at d may take: AttemptTimeout, cut so
// that it ends leaseMargin before d's lease does, by the worker's clock.
// It is the whole attempt, look-up, connection, TLS, request and the
// reading of the answer, which all run under its context.
func (w *Worker) budget(d *licentia.Delivery) time.Duration {
	if d.LeasedUntil == nil {
		return AttemptTimeout
	}
	return min(AttemptTimeout, d.LeasedUntil.Sub(w.clock.Now())-leaseMargin)
}

// record writes finished attempts in one transaction, with the turning off
// of endpoints whose deliveries spent their retries. Each write ends its
// delivery's lease, and is skipped when that lease has passed to another
// claim (the lease check of FinishAttempts).
func (w *Worker) record(ctx context.Context, done []finished) error {
	if len(done) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err := w.store.InTx(ctx, func(tx store.Tx) error {
		ds := make([]licentia.Delivery, len(done))
		for i, f := range done {
			ds[i] = f.d
		}
		if err := tx.FinishAttempts(ctx, ds); err != nil {
			return err
		}
		// After every outcome is written, so that a success in the same
		// group counts.
		for i := range done {
			if !done[i].spent {
				continue
			}
			if err := turnOffIfFailing(ctx, tx, &done[i].d, done[i].at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record %d attempts: %w", len(done), err)
	}
	for i := range done {
		w.metrics.Delivery(outcome(&done[i].d))
	}
	return nil
}

// outcome is how the metrics count a recorded attempt, by the state it
// left its delivery in. An attempt whose write was skipped, its lease
// having passed to another claim, is counted all the same: it was made.
func outcome(d *licentia.Delivery) string {
	switch d.Status {
	case licentia.DeliverySucceeded:
		return metrics.DeliveryDelivered
	case licentia.DeliveryPending:
		return metrics.DeliveryRetrying
	}
	return metrics.DeliveryGivenUp
}

// turnOffIfFailing turns an endpoint off (disabled_reason
// consecutive_failures) when a delivery to it has spent its retries, about
// 55 hours of failures, and no delivery to it has succeeded since that
// delivery was created: the receiver is gone, and sending more only piles
// up failures. One event its receiver refuses while others succeed does
// not turn it off. The maker turns it on again with PATCH.
func turnOffIfFailing(ctx context.Context, tx store.Tx, d *licentia.Delivery, now time.Time) error {
	last, err := tx.LastDeliverySuccess(ctx, d.EndpointID)
	if err != nil || last != nil && !last.Before(d.CreatedAt) {
		return err
	}
	ep, err := tx.WebhookEndpoint(ctx, d.OrgID, d.EndpointID)
	if isNotFound(err) || err == nil && !ep.Enabled {
		return nil
	}
	if err != nil {
		return err
	}
	reason := licentia.DisabledByFailures
	ep.Enabled, ep.DisabledReason, ep.UpdatedAt = false, &reason, now
	if err := tx.UpdateWebhookEndpoint(ctx, ep); err != nil {
		return err
	}
	return events.Audit(ctx, tx, licentia.AuditEntry{OrgID: d.OrgID, Action: licentia.AuditWebhookEndpointUpdated,
		Actor: licentia.Actor{Type: licentia.ActorSystem}, At: now},
		map[string]any{"webhook_endpoint_id": ep.ID, "enabled": false, "disabled_reason": reason, "delivery_id": d.ID})
}

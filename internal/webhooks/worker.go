package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// lease is how long a claimed delivery is kept from other processes. It is
// well past AttemptTimeout, so a live attempt is never sent twice; a crashed one is
// retried once the lease ends.
const lease = time.Minute

// Worker sends due deliveries. Several workers, in one process or many,
// share the queue: each claims deliveries under a lease first.
type Worker struct {
	store     store.Store
	clock     clock.Clock
	keys      *signing.Keyring
	client    *http.Client
	userAgent string
	log       *slog.Logger
	batch     int
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
	// Batch is how many deliveries one step claims; 50 by default.
	Batch int
}

// NewWorker returns a Worker.
func NewWorker(o WorkerOptions) *Worker {
	if o.Batch == 0 {
		o.Batch = 50
	}
	return &Worker{store: o.Store, clock: o.Clock, keys: o.Keys, client: o.Client,
		userAgent: UserAgent(o.BaseURL), log: o.Logger, batch: o.Batch}
}

// RunOnce claims the due deliveries, sends them concurrently and records
// each outcome. It reports how many it attempted.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	now := w.clock.Now().UTC().Truncate(time.Millisecond)
	var ds []licentia.Delivery
	err := w.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		ds, err = tx.ClaimDeliveries(ctx, now, now.Add(lease), w.batch)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("claim deliveries: %w", err)
	}
	var wg sync.WaitGroup
	for i := range ds {
		wg.Go(func() {
			// Stopping leaves attempts in flight unrecorded on purpose;
			// only other failures are worth a log line.
			if err := w.deliver(ctx, &ds[i]); err != nil && ctx.Err() == nil {
				w.log.Error("delivery not recorded", "delivery_id", ds[i].ID, "error", err.Error())
			}
		})
	}
	wg.Wait()
	return len(ds), nil
}

// deliver makes one attempt and records it. An attempt cut short by ctx
// (the process stopping) or by a store that cannot be read is not
// recorded: the delivery stays leased and is tried again once the lease
// ends, as after a crash.
func (w *Worker) deliver(ctx context.Context, d *licentia.Delivery) error {
	code, reason, final, err := w.attempt(ctx, d)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("deliver %s: %w", d.ID, err)
	}
	now := w.clock.Now().UTC().Truncate(time.Millisecond)
	d.Attempts++
	d.LastAttemptAt, d.LastStatusCode, d.FailureReason = &now, code, reason
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
	spent := d.Status == licentia.DeliveryFailed && !final
	return w.store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.FinishAttempt(ctx, d); err != nil {
			return err
		}
		if spent {
			return turnOffIfFailing(ctx, tx, d, now)
		}
		return nil
	})
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

func failure(reason string, final bool) (*int, *string, bool, error) { return nil, &reason, final, nil }

// attempt sends the delivery once. It returns the status code (when one
// came), the failure reason (nil on success) and whether the failure is
// final: a body over 64 KB is never sent, and a delivery of a removed or
// turned-off endpoint is not tried again. It returns an error, and nothing
// to record, when the endpoint or the event cannot be read for another
// reason than their absence: a store that is briefly down must not fail a
// delivery for good.
func (w *Worker) attempt(ctx context.Context, d *licentia.Delivery) (*int, *string, bool, error) {
	ep, err := w.store.WebhookEndpoint(ctx, d.OrgID, d.EndpointID)
	switch {
	case isNotFound(err):
		return failure(licentia.FailureEndpointOff, true)
	case err != nil:
		return nil, nil, false, fmt.Errorf("deliver %s: %w", d.ID, err)
	case !ep.Enabled:
		return failure(licentia.FailureEndpointOff, true)
	}
	ev, err := w.store.Event(ctx, d.EventID)
	switch {
	case isNotFound(err):
		return failure(licentia.FailureEndpointOff, true)
	case err != nil:
		return nil, nil, false, fmt.Errorf("deliver %s: %w", d.ID, err)
	case len(ev.Body) > licentia.MaxWebhookBody:
		return failure(licentia.FailurePayloadTooLarge, true)
	}
	now := w.clock.Now()
	sig, err := w.signature(ctx, ep.ID, ev, now)
	if err != nil {
		w.log.Error("webhook secret unavailable", "webhook_endpoint_id", ep.ID, "error", err.Error())
		return failure(licentia.FailureConnection, false)
	}
	actx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, ep.URL, bytes.NewReader(ev.Body))
	if err != nil {
		return failure(licentia.FailureConnection, false)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", w.userAgent)
	req.Header.Set("webhook-id", ev.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := w.client.Do(req)
	if err != nil {
		return failure(classify(err), false)
	}
	// Only the status code is kept; the answer body is never read.
	resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return &code, nil, false, nil
	case code >= 300 && code < 400:
		reason := licentia.FailureRedirect
		return &code, &reason, false, nil
	}
	reason := licentia.FailureStatus
	return &code, &reason, false, nil
}

// isNotFound reports whether err says a row is missing: the store answers
// a contract code for that, and anything else is a failure to read.
func isNotFound(err error) bool {
	e, ok := errors.AsType[*licentia.Error](err)
	return ok && (e.Code == licentia.CodeWebhookEndpointNotFound || e.Code == licentia.CodeNotFound)
}

// signature signs the event with the endpoint's current secret and every
// secret replaced in the last 24 hours.
func (w *Worker) signature(ctx context.Context, endpointID string, ev *licentia.Event, now time.Time) (string, error) {
	all, err := w.store.WebhookSecrets(ctx, endpointID)
	if err != nil {
		return "", err
	}
	var keys [][]byte
	for _, s := range SigningSecrets(all, now) {
		raw, err := OpenSecret(w.keys, &s)
		if err != nil {
			return "", err
		}
		keys = append(keys, raw)
	}
	if len(keys) == 0 {
		return "", errors.New("the endpoint has no secret")
	}
	return Sign(keys, ev.ID, now, ev.Body), nil
}

// classify names why a request failed.
func classify(err error) string {
	var tlsErr *tls.CertificateVerificationError
	var netErr net.Error
	switch {
	case errors.Is(err, ErrAddressRefused):
		return licentia.FailureAddressRefused
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return licentia.FailureTimeout
	case errors.As(err, &tlsErr):
		return licentia.FailureTLS
	}
	return licentia.FailureConnection
}

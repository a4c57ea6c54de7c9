// Package courier sends the mails queued for customers. A mail is a row
// written in the transaction of the change that causes it; the worker
// claims due mails under a lease, renders each from what it references as
// it is now (keys are derived, never stored), hands it to the mail
// sender, and records the outcome, retrying as webhook deliveries do.
// Several workers, in one process or many, share the queue.
package courier

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// Lease is how long a claimed mail is kept from other workers. A mail
// whose worker died is sent by another once its lease ends, so it is kept
// short: an attempt (AttemptTimeout), time for the claim to commit, and
// leaseMargin.
const Lease = 2 * time.Minute

// AttemptTimeout bounds one attempt: connecting to the mail server and
// handing the mail over.
const AttemptTimeout = time.Minute

// leaseMargin is how long before its lease ends an attempt is cut at the
// latest, by the worker's clock, so that a mail still being handed over
// is never claimed by another worker whose clock runs a little ahead.
const leaseMargin = 15 * time.Second

// recordTimeout bounds the transaction that records an attempt. It is not
// cut short when the worker stops: a mail handed over is worth recording,
// or it would be sent again once its lease ends.
const recordTimeout = 10 * time.Second

// Worker sends due mails.
type Worker struct {
	store     store.Store
	clock     clock.Clock
	keys      *signing.Keyring
	sender    mail.Sender
	publicURL string
	log       *slog.Logger
	batch     int
	poll      time.Duration
}

// Options are the dependencies of a Worker.
type Options struct {
	Store  store.Store
	Clock  clock.Clock
	Keys   *signing.Keyring
	Sender mail.Sender
	// PublicURL starts the links in mails.
	PublicURL string
	Logger    *slog.Logger
	// Batch is how many mails one claim takes, sent at once; 8 by default.
	Batch int
	// Poll is how long Run waits before claiming again when fewer than a
	// batch were due; 1 s by default.
	Poll time.Duration
}

// New returns a Worker.
func New(o Options) *Worker {
	if o.Batch == 0 {
		o.Batch = 8
	}
	if o.Poll == 0 {
		o.Poll = time.Second
	}
	return &Worker{store: o.Store, clock: o.Clock, keys: o.Keys, sender: o.Sender, publicURL: o.PublicURL,
		log: o.Logger, batch: o.Batch, poll: o.Poll}
}

// RunOnce claims a batch of due mails, sends them at once and records each
// outcome as it comes. It reports how many it claimed. It is Run's step,
// for tests.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	claimed, err := w.claim(ctx)
	if err != nil || len(claimed) == 0 {
		return 0, err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(claimed))
	for i := range claimed {
		wg.Go(func() { errs[i] = w.attempt(ctx, &claimed[i]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return len(claimed), err
		}
	}
	return len(claimed), nil
}

// Run sends due mails until ctx is done, waiting Poll between claims when
// fewer than a batch were due. It returns nil when ctx is done, or the
// error of a failed step. Stopping leaves attempts in flight unrecorded,
// as a crash would: their mails are sent once their leases end.
func (w *Worker) Run(ctx context.Context) error {
	for {
		n, err := w.RunOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if n == w.batch {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(w.poll):
		}
	}
}

// claim leases due mails and renders them in the claim's transaction, one
// connection for the lot. The lease starts once the transaction has begun,
// so waiting for the database's write lock does not use it up. A failure
// to read fails the claim, so that a store briefly down never fails a
// mail.
func (w *Worker) claim(ctx context.Context) ([]rendered, error) {
	var out []rendered
	err := w.store.InTx(ctx, func(tx store.Tx) error {
		out = nil
		now := licentia.TruncateMillis(w.clock.Now())
		ms, err := tx.ClaimMails(ctx, now, now.Add(Lease), w.batch)
		if err != nil {
			return err
		}
		for _, m := range ms {
			r, err := w.render(ctx, tx, m)
			if err != nil {
				return fmt.Errorf("render mail %s: %w", m.ID, err)
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim mails: %w", err)
	}
	return out, nil
}

// attempt hands a rendered mail over, within what its lease leaves, and
// records the outcome. A mail whose lease has no room left, or whose
// attempt was cut short by ctx (the process stopping), is left leased: it
// is tried again once the lease ends, as after a crash.
func (w *Worker) attempt(ctx context.Context, r *rendered) error {
	m := r.m
	if r.reason == "" {
		budget := min(AttemptTimeout, m.LeasedUntil.Sub(w.clock.Now())-leaseMargin)
		if budget <= 0 {
			w.log.WarnContext(ctx, "mail claim used up its lease; it is sent once the lease ends", "mail_id", m.ID)
			return nil
		}
		actx, cancel := context.WithTimeout(ctx, budget)
		err := w.sender.Send(actx, r.msg)
		cancel()
		// A mail handed over is recorded even as the process stops; one
		// cut short by stopping is left to its lease.
		if err != nil && ctx.Err() != nil {
			return nil
		}
		if err != nil {
			// The sender's errors name neither the recipient nor the body.
			w.log.WarnContext(ctx, "mail not handed over", "mail_id", m.ID, "org_id", m.OrgID, "error", err.Error())
			r.reason = licentia.MailFailureNotHandedOver
		}
	}
	now := licentia.TruncateMillis(w.clock.Now())
	m.Attempts++
	m.LastAttemptAt = &now
	switch {
	case r.reason == "":
		m.Status, m.NextAttemptAt, m.FailureReason = licentia.MailSent, nil, nil
	case r.final:
		m.Status, m.NextAttemptAt, m.FailureReason = licentia.MailFailed, nil, &r.reason
	default:
		next, ok := nextAttempt(m.Attempts, now)
		m.Status, m.NextAttemptAt, m.FailureReason = licentia.MailQueued, &next, &r.reason
		if !ok {
			m.Status, m.NextAttemptAt = licentia.MailFailed, nil
		}
	}
	return w.record(ctx, &m)
}

// record writes an attempt's outcome and ends the mail's lease; a lease
// that passed to another claim meanwhile records nothing.
func (w *Worker) record(ctx context.Context, m *licentia.Mail) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	var recorded bool
	err := w.store.InTx(ctx, func(tx store.Tx) (err error) {
		recorded, err = tx.FinishMail(ctx, m)
		return err
	})
	if err != nil {
		return fmt.Errorf("record mail %s: %w", m.ID, err)
	}
	if !recorded {
		w.log.WarnContext(ctx, "mail attempt outlived its lease; another claim records the mail", "mail_id", m.ID)
	}
	return nil
}

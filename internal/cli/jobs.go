package cli

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/console"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/oauth"
	"github.com/licentia/licentia/internal/portal"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/webhooks"
)

// job is a step serve runs on a timer. Every step is safe to run in several
// processes at once: each does its work in transactions.
type job struct {
	name  string
	every time.Duration
	step  func(ctx context.Context) error
}

func jobs(st store.Store, svc *admin.Service, act *activation.Service, cat *signing.Catalogue, worker *webhooks.Worker,
	mailer *courier.Worker, cons *console.Server, customers *portal.Server, authz *oauth.Service, api *httpapi.Server, clk clock.Clock) []job {
	return []job{
		{"catalogue", signing.RefreshInterval, cat.Refresh},
		{"licence sweep", time.Minute, func(ctx context.Context) error {
			_, err := svc.SweepLicences(ctx)
			return err
		}},
		// A lease is at least two minutes: a sweep every 30 seconds frees
		// a silent machine well within a quarter of it.
		{"lease sweep", 30 * time.Second, func(ctx context.Context) error {
			_, err := act.FreeExpiredLeases(ctx)
			return err
		}},
		// Leases of floating use stop counting when they end; the sweep
		// only keeps their table small.
		{"floating lease sweep", time.Minute, func(ctx context.Context) error {
			_, err := act.SweepLeases(ctx)
			return err
		}},
		// Run keeps sending until the context ends; the interval is only
		// the wait before it starts again after a failed claim.
		{"webhook deliveries", time.Second, worker.Run},
		// Mail to customers, likewise: Run keeps sending until the context
		// ends.
		{"customer mail", time.Second, mailer.Run},
		{"event clean-up", time.Hour, func(ctx context.Context) error {
			_, err := events.Cleanup(ctx, st, clk.Now())
			return err
		}},
		// Expired sessions are refused when read; this only keeps the
		// table small.
		{"session clean-up", time.Hour, func(ctx context.Context) error {
			_, err := cons.SweepSessions(ctx)
			return err
		}},
		// Portal sign-in links and sessions likewise.
		{"portal clean-up", time.Hour, func(ctx context.Context) error {
			_, err := customers.Sweep(ctx)
			return err
		}},
		// Expired codes are refused when read; this only keeps the table
		// small.
		{"authorization code clean-up", time.Hour, func(ctx context.Context) error {
			_, err := authz.SweepCodes(ctx)
			return err
		}},
		// Expired Idempotency-Keys are taken over when sent again; this
		// only keeps the table small.
		{"idempotency key clean-up", time.Hour, func(ctx context.Context) error {
			_, err := deleteExpiredIdempotencyKeys(ctx, st, clk.Now().UTC())
			return err
		}},
		// Claims the database failed to settle as their requests ended;
		// the step itself waits 1 to 8 seconds between tries of a claim.
		{"idempotency key settling", time.Second, api.SettleIdempotencyKeys},
	}
}

// runJobs runs each job at once and then on its own ticker until ctx is
// done, and returns a function that waits until every job has stopped. A
// failed step is logged and tried again at its next tick. The first run is
// not left to the first tick: a process restarted more often than a job's
// interval (an hour for the event clean-up) would otherwise never run it.
func runJobs(ctx context.Context, log *slog.Logger, js []job) (wait func()) {
	var wg sync.WaitGroup
	for _, j := range js {
		wg.Go(func() {
			t := time.NewTicker(j.every)
			defer t.Stop()
			for {
				if err := j.step(ctx); err != nil && ctx.Err() == nil {
					log.Warn("background job failed", "job", j.name, "error", err.Error())
				}
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		})
	}
	return wg.Wait
}

// deleteExpiredIdempotencyKeys deletes the Idempotency-Keys expired at now
// and reports how many.
func deleteExpiredIdempotencyKeys(ctx context.Context, st store.Store, now time.Time) (int64, error) {
	var n int64
	err := st.InTx(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.DeleteExpiredIdempotencyKeys(ctx, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delete expired idempotency keys: %w", err)
	}
	return n, nil
}

package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/events"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// job is a step serve runs on a timer. Every step is safe to run in several
// processes at once: each does its work in transactions.
type job struct {
	name  string
	every time.Duration
	step  func(ctx context.Context) error
}

func jobs(st store.Store, svc *admin.Service, cat *signing.Catalogue, clk clock.Clock) []job {
	return []job{
		{"catalogue", signing.RefreshInterval, cat.Refresh},
		{"licence sweep", time.Minute, func(ctx context.Context) error {
			_, err := svc.SweepLicences(ctx)
			return err
		}},
		{"event clean-up", time.Hour, func(ctx context.Context) error {
			_, err := events.Cleanup(ctx, st, clk.Now())
			return err
		}},
	}
}

// runJobs runs each job on its own ticker until ctx is done. A failed step
// is logged and tried again at its next tick.
func runJobs(ctx context.Context, log *slog.Logger, js []job) {
	for _, j := range js {
		go func() {
			t := time.NewTicker(j.every)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if err := j.step(ctx); err != nil && ctx.Err() == nil {
						log.Warn("background job failed", "job", j.name, "error", err.Error())
					}
				}
			}
		}()
	}
}

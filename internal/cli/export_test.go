package cli

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/admin"
	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/console"
	"github.com/licentia/licentia/internal/courier"
	"github.com/licentia/licentia/internal/httpapi"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mail"
	"github.com/licentia/licentia/internal/oauth"
	"github.com/licentia/licentia/internal/portal"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// WrapHandler puts wrap around the service's handler, so that a test can
// hold a request in flight. Call it before Run.
func (a *App) WrapHandler(wrap func(http.Handler) http.Handler) {
	a.http.Handler = wrap(a.http.Handler)
}

// JobIntervals returns how often each of the App's background jobs runs, by
// name.
func (a *App) JobIntervals() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, j := range a.jobs {
		out[j.name] = j.every
	}
	return out
}

// JobSteps returns the steps of serve's background jobs by name, wired as
// NewApp wires them but on st and clk, so that a test can run them with a
// fake clock.
func JobSteps(st store.Store, clk clock.Clock) map[string]func(context.Context) error {
	log := slog.New(slog.DiscardHandler)
	keys := signing.NewKeyring(nil)
	svc := admin.New(admin.Options{Store: st, Clock: clk, Plans: licentia.DefaultPlans(), Keys: keys, Logger: log})
	worker, err := newWorker(config.Config{}, st, clk, keys, nil, log)
	if err != nil {
		panic(err) // no pins and no roots to read
	}
	cons, err := console.New(console.Options{Store: st, Admin: svc, Clock: clk, Logger: log})
	if err != nil {
		panic(err)
	}
	customers, err := portal.New(portal.Options{Store: st, Admin: svc, Keys: keys, Clock: clk, Logger: log})
	if err != nil {
		panic(err)
	}
	authz := oauth.New(oauth.Options{Store: st, Clock: clk, Logger: log})
	cat := signing.NewCatalogue(st, clk, log)
	act := activation.New(activation.Options{Store: st, Clock: clk, Keys: keys, Catalogue: cat, Validity: 24 * time.Hour, Logger: log})
	api := httpapi.New(httpapi.Options{Store: st, Admin: svc, Activation: act, Auth: auth.NewAuthenticator(st, clk), Clock: clk, Logger: log})
	out := map[string]func(context.Context) error{}
	mailer := courier.New(courier.Options{Store: st, Clock: clk, Keys: keys, Sender: mail.NewOutbox(os.DevNull, ""), Logger: log})
	for _, j := range jobs(st, svc, act, cat, worker, mailer, cons, customers, authz, api, clk) {
		out[j.name] = j.step
	}
	return out
}

// Job is a background job for RunJobs.
type Job struct {
	Name  string
	Every time.Duration
	Step  func(context.Context) error
}

// RunJobs runs js as serve runs its jobs and returns the wait for them to
// stop.
func RunJobs(ctx context.Context, log *slog.Logger, js []Job) (wait func()) {
	var in []job
	for _, j := range js {
		in = append(in, job{name: j.Name, every: j.Every, step: j.Step})
	}
	return runJobs(ctx, log, in)
}

// GCPercent exposes the garbage collector target serve picks.
var GCPercent = gcPercent

// DebugListen opens the profiler's listener on addr, as serve does, and
// closes it again.
func DebugListen(addr string) error {
	d, err := newDebugServer(addr, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	return d.close()
}

// Mail is the App's mail sender.
func (a *App) Mail() mail.Sender { return a.mail }

// Command dataload fills one existing organization's product with a large,
// realistic data set, written straight into the database: by default
// 1,000,000 licences and 3,000,000 activations, on SQLite or PostgreSQL, in
// a few minutes. It is opt-in tooling for benchmarks and capacity tests,
// never run by the service.
//
//	go run ./tools/dataload -database-url sqlite:/tmp/data/licentia.db -org load -product dataset
//
// The organization (licentia org create) and the product (POST
// /v1/admin/products, which creates its signing key) must exist. With
// SQLite, stop serve first: the loader holds the one write lock for each
// batch. With PostgreSQL a running service only waits for the batches.
//
// # Naming
//
// Licence n, for n from 0 to -licences - 1, has email
// load-NNNNNNN@dataset.example and external_ref load-NNNNNNN (n on seven
// digits), on the -product; its machines are load-NNNNNNN-m0, -m1, ... The
// load generator finds loaded licences by these names.
//
// # Mix
//
// Everything is drawn from -seed and the product id: the same seed and
// product give the same ids, states and limits, and times at the same
// offsets before the load's start, in any database (product ids, like
// licence ids, are never reused, so two products never share an id). Ids
// are version 4 UUIDs. Every licence is issued by an administrator (source
// admin; no payment provider, so no subscriptions) with the product's
// current major version:
//
//   - 5% trials, issued within the last 29 days for 30 days: all running.
//   - 10% revoked and 5% stored expired, issued in the past year and changed
//     (with a reason) some time after; 40% of them had a term.
//   - 80% stored active, issued in the past year: five in eight perpetual,
//     three in eight with a term of 30 days (15%), 90 days (25%), a year
//     (45%) or two years (15%). About a third of terms have ended, so about
//     10% of all licences are lapsed (derived expired).
//
// Derived at the load's start that is about 70% active, 5% trial, 15%
// expired and 10% revoked: some 750,000 of a million licences take a place
// in the plan (the business plan allows 1,000,000, and the load generator
// issues more afterwards). The loader refuses a load that would take the
// organization past its plan's limit.
//
// Limits: 60% machines (1, 2, 3 or 5), 40% seats (1, 2, 5 or 10, times the
// product's machines_per_seat).
//
// Activations: -activations in all. Each pair of licences gets exactly its
// share (6 for the default 3 a licence), split between the two at random in
// proportion to the machines each allows. They are activated while the
// licence could take a seat (before its expiry and its revocation or expiry
// by an administrator), in time order; 15% are freed later by their user,
// and when every seat is taken the oldest live machine is freed as the next
// one arrives, so no licence ever held more live machines than it allows.
// About 70% stay live.
//
// # Consistency
//
// Each batch of licences is one transaction holding the licences, their
// activations, live_activations equal to their live rows, and the
// licence_stats counters they add (added to the organization's existing
// counters). Each licence is counted in the row store.KeyOf gives for the
// sweep watermark read in that transaction, which cannot move before it
// commits (SQLite's one write lock; PostgreSQL's sweep lock, shared), as
// every write of the service does. Before loading, the loader brings the
// sweep up to date as serve does when it starts, so loaded licences whose
// term has ended are counted lapsed at once instead of being corrected on
// every count until the sweeper runs. A load that fails part way leaves
// whole batches, each consistent; its licences make a second run refuse.
//
// Not written: events, audit entries and webhook deliveries. Loaded
// licences have no history, and no webhook fires for them.
//
// To write fast, SQLite runs with synchronous=OFF on the loader's own
// connection and PostgreSQL with synchronous_commit off for its
// transactions: a power loss during the load may lose the last batches,
// never corrupt the database.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/licentia"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv); err != nil {
		stop()
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "dataload:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("dataload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := fs.String("database-url", "", "sqlite:PATH or postgres://... (default: as serve, from LICENTIA_DATABASE_URL or LICENTIA_DATA_DIR)")
	org := fs.String("org", "", "slug of an existing organization (required)")
	product := fs.String("product", "", "id of an existing product of the organization (required)")
	licences := fs.Int("licences", 1_000_000, "licences to load")
	activations := fs.Int("activations", 3_000_000, "activations to load, spread over the licences")
	seed := fs.Uint64("seed", 1, "seed of every generated value")
	batch := fs.Int("batch", 50_000, "licences a transaction, with their activations")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case *org == "":
		return fmt.Errorf("-org is required")
	case *product == "":
		return fmt.Errorf("-product is required")
	case *licences < 1 || *licences > 10_000_000:
		// Seven digits name every licence.
		return fmt.Errorf("-licences must be from 1 to 10000000")
	case *activations < 0:
		return fmt.Errorf("-activations must not be negative")
	case *batch < 1:
		return fmt.Errorf("-batch must be at least 1")
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	if *dbURL != "" {
		cfg.DatabaseURL = *dbURL
	}
	plans, err := loadPlans(cfg.PlansFile)
	if err != nil {
		return err
	}
	sum, err := load(ctx, options{
		databaseURL: cfg.DatabaseURL, org: *org, product: *product,
		licences: *licences, activations: *activations, seed: *seed, batch: *batch, plans: plans,
	}, clock.System{}, stderr)
	if err != nil {
		return err
	}
	sum.print(stdout)
	return nil
}

// loadPlans reads the plans serve would apply, to refuse a load past the
// organization's limit as the service refuses an issue.
func loadPlans(file string) (licentia.Plans, error) {
	if file == "" {
		return licentia.DefaultPlans(), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("LICENTIA_PLANS_FILE: %w", err)
	}
	defer f.Close()
	return licentia.ReadPlans(f)
}

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/sqlite"
)

// options are a load's settings, checked by run.
type options struct {
	databaseURL  string
	org, product string
	licences     int
	activations  int
	seed         uint64
	batch        int
	plans        licentia.Plans
}

// The columns the loader writes; the others (integration and payment
// provider ids, subscription end, anonymisation) stay NULL, as for a licence
// issued through the administration API.
const (
	licenceColumns = `id, org_id, product_id, email, email_search, issued_at, expires_at, limit_kind, limit_count, major,
	status, status_reason, status_changed_at, trial_ends_at, source, external_ref, created_at, updated_at, live_activations`
	activationColumns = `id, org_id, licence_id, machine_id, label, os, app_version, activated_at, last_seen_at, deactivated_at`
	// statsUpsert adds to a counter row, as the engines do; %s is the
	// engine's placeholders.
	statsUpsert = `INSERT INTO licence_stats (org_id, product_id, status, source, term, trial, lapsed, shard, n, live)
	VALUES (%s)
	ON CONFLICT (org_id, product_id, status, source, term, trial, lapsed, shard)
	DO UPDATE SET n = licence_stats.n + excluded.n, live = licence_stats.live + excluded.live`
)

// sink writes generated rows into one engine.
type sink interface {
	// write commits licences, their activations and their counters in one
	// transaction.
	write(ctx context.Context, ls []licentia.Licence, as []licentia.Activation) error
	// finish tidies up after the last batch.
	finish(ctx context.Context) error
	close() error
}

// openStore opens the engine of url as serve does, applying pending
// migrations, and a sink writing into the same database.
func openStore(ctx context.Context, url string) (store.Store, func(context.Context) (sink, error), error) {
	if path, ok := strings.CutPrefix(url, "sqlite:"); ok {
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			return nil, nil, err
		}
		return st, func(ctx context.Context) (sink, error) { return openSQLiteSink(ctx, path) }, nil
	}
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		st, err := postgres.Open(ctx, url)
		if err != nil {
			return nil, nil, err
		}
		return st, func(ctx context.Context) (sink, error) { return openPostgresSink(ctx, url) }, nil
	}
	return nil, nil, fmt.Errorf("open store: the database URL must be sqlite:PATH or postgres://...")
}

// summary is what a load did.
type summary struct {
	org, product        string
	now                 time.Time
	licences            int
	activations, live   int
	states              map[licentia.State]int
	placesBefore, limit int64
	elapsed             time.Duration
	counts              *store.LicenceCounts
}

func (s *summary) print(w io.Writer) {
	rows := s.licences + s.activations
	fmt.Fprintf(w, "loaded %d licences and %d activations (%d live) into product %s of %s\n",
		s.licences, s.activations, s.live, s.product, s.org)
	fmt.Fprintf(w, "%d rows in %.1fs: %.0f rows/s\n", rows, s.elapsed.Seconds(), float64(rows)/s.elapsed.Seconds())
	fmt.Fprintf(w, "derived at %s: active %d, trial %d, expired %d, revoked %d\n", licentia.FormatTime(s.now),
		s.states[licentia.StateActive], s.states[licentia.StateTrial], s.states[licentia.StateExpired], s.states[licentia.StateRevoked])
	fmt.Fprintf(w, "plan places: %d before, %d after, limit %d\n", s.placesBefore,
		s.placesBefore+int64(s.states[licentia.StateActive]+s.states[licentia.StateTrial]), s.limit)
	c := s.counts
	fmt.Fprintf(w, "product counts read back: all %d, active %d, trial %d, expired %d, revoked %d, perpetual %d, term %d, live machines %d\n",
		c.All, c.Active, c.Trial, c.Expired, c.Revoked, c.Perpetual, c.Term, c.LiveMachines)
}

// load runs one load. clk gives the load's start, from which every
// generated time is an offset.
func load(ctx context.Context, o options, clk clock.Clock, progress io.Writer) (*summary, error) {
	st, openSink, err := openStore(ctx, o.databaseURL)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	org, err := st.OrganizationBySlug(ctx, o.org)
	if err != nil {
		return nil, fmt.Errorf("organization %q (create it with licentia org create): %w", o.org, err)
	}
	p, err := st.Product(ctx, org.ID, o.product)
	if err != nil {
		return nil, fmt.Errorf("product %q of %s (create it with POST /v1/admin/products): %w", o.product, o.org, err)
	}
	now := licentia.TruncateMillis(clk.Now())
	if err := refuseReload(ctx, st, org.ID, p.ID, now); err != nil {
		return nil, err
	}
	g := newGenerator(spec{
		orgID: org.ID, productID: p.ID, major: p.CurrentMajor, machinesPerSeat: p.MachinesPerSeat,
		licences: o.licences, activations: o.activations, seed: o.seed, now: now,
	})
	sum := &summary{org: o.org, product: p.ID, now: now, states: g.survey()}
	if err := checkPlan(ctx, st, o.plans, org, now, sum); err != nil {
		return nil, err
	}
	if err := catchUpSweep(ctx, st, now); err != nil {
		return nil, err
	}
	sk, err := openSink(ctx)
	if err != nil {
		return nil, err
	}
	defer sk.close()
	start := time.Now()
	var ls []licentia.Licence
	var as []licentia.Activation
	for lo := 0; lo < o.licences; lo += o.batch {
		hi := min(lo+o.batch, o.licences)
		ls, as = ls[:0], as[:0]
		for n := lo; n < hi; n++ {
			var l licentia.Licence
			l, as = g.generate(n, as)
			ls = append(ls, l)
			sum.live += int(l.LiveActivations)
		}
		if err := sk.write(ctx, ls, as); err != nil {
			return nil, fmt.Errorf("load licences %d to %d: %w", lo, hi-1, err)
		}
		sum.licences, sum.activations = hi, sum.activations+len(as)
		secs := time.Since(start).Seconds()
		fmt.Fprintf(progress, "dataload: %d/%d licences, %d activations, %.1fs, %.0f rows/s\n",
			hi, o.licences, sum.activations, secs, float64(sum.licences+sum.activations)/secs)
	}
	if err := sk.finish(ctx); err != nil {
		return nil, err
	}
	sum.elapsed = time.Since(start)
	if sum.counts, err = st.CountLicences(ctx, org.ID, &p.ID, now, now); err != nil {
		return nil, err
	}
	return sum, nil
}

// refuseReload refuses a product that holds a loaded licence already: every
// load starts with licence 0, so a second one would only collide with the
// first.
func refuseReload(ctx context.Context, st store.Store, orgID, productID string, now time.Time) error {
	email, ref := fmt.Sprintf(emailFormat, 0), fmt.Sprintf(refFormat, 0)
	found, err := st.FindLicences(ctx, orgID, store.LicenceFilter{Email: &email, ProductID: &productID, Limit: 1}, now)
	if err != nil {
		return err
	}
	_, err = st.LicenceByExternalRef(ctx, orgID, productID, ref)
	switch {
	case err == nil || len(found) > 0:
		return fmt.Errorf("product %s already holds loaded licences (%s): load into another product or a fresh database", productID, email)
	case licentia.ErrorCode(err) != licentia.CodeLicenceNotFound:
		return err
	}
	return nil
}

// survey counts the derived states of the licences to load at the load's
// start.
func (g *generator) survey() map[licentia.State]int {
	states := map[licentia.State]int{}
	for n := range g.licences {
		l := g.licence(n, g.stream(streamLicence, n))
		states[l.DerivedState(g.now)]++
	}
	return states
}

// checkPlan refuses a load that would take the organization past its plan's
// limit on active licences, which the service would refuse licence by
// licence.
func checkPlan(ctx context.Context, st store.Store, plans licentia.Plans, org *licentia.Organization, now time.Time, sum *summary) error {
	limits, err := plans.Limits(org.Plan)
	if err != nil {
		return err
	}
	if sum.placesBefore, err = st.PlanLicenceCount(ctx, org.ID, now); err != nil {
		return err
	}
	sum.limit = limits.ActiveLicences
	adds := int64(sum.states[licentia.StateActive] + sum.states[licentia.StateTrial])
	if sum.placesBefore+adds > sum.limit {
		return fmt.Errorf("the load would take %s past its plan %s: %d active licences, %d more loaded, limit %d",
			org.Slug, org.Plan, sum.placesBefore, adds, sum.limit)
	}
	return nil
}

// sweepBatch is how many licences one sweep transaction moves, as in serve.
const sweepBatch = 1000

// catchUpSweep brings the sweep watermark up to now, as serve does when it
// starts.
func catchUpSweep(ctx context.Context, st store.Store, now time.Time) error {
	for {
		var n int
		err := st.InTx(ctx, func(tx store.Tx) error {
			var err error
			n, err = tx.SweepLicences(ctx, now, sweepBatch)
			return err
		})
		if err != nil {
			return fmt.Errorf("sweep licences: %w", err)
		}
		if n == 0 {
			return nil
		}
	}
}

func columnList(cols string) []string {
	var out []string
	for _, c := range strings.Split(cols, ",") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

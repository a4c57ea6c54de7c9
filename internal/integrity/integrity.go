// Package integrity checks a whole database, live or restored: every sealed
// secret opens under the master key, every row's parent exists, and the
// licence counters equal a full recount. It reads through one snapshot of
// the store, so a running service may keep writing meanwhile.
package integrity

import (
	"context"
	"fmt"

	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

// The checks a problem names.
const (
	CheckMasterKey       = "master_key"
	CheckSealedSecret    = "sealed_secret"
	CheckLicenceProduct  = "licence_product"
	CheckActivation      = "activation_licence"
	CheckDelivery        = "delivery_event"
	CheckLiveActivations = "live_activations"
	CheckLicenceCounters = "licence_counters"
	CheckReport          = "report"
)

// MaxProblems bounds the problems a report lists, so that a database broken
// everywhere still gives a report that fits in memory and on a screen.
const MaxProblems = 1000

// DefaultPageSize is how many licences are read at a time.
const DefaultPageSize = 1000

// Report is the outcome of Check, printed as one JSON line.
type Report struct {
	OK       bool      `json:"ok"`
	Checked  Checked   `json:"checked"`
	Problems []Problem `json:"problems"`
}

// Checked counts what was checked.
type Checked struct {
	ProductKeys    int64 `json:"product_keys"`
	WebhookSecrets int64 `json:"webhook_secrets"`
	Integrations   int64 `json:"integrations"`
	Licences       int64 `json:"licences"`
	CounterRows    int64 `json:"counter_rows"`
}

// Problem is one failed check. It names the record by kind and id and
// never holds a secret.
type Problem struct {
	Check   string `json:"check"`
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Message string `json:"message"`
}

// Options tune Check.
type Options struct {
	// PageSize is how many licences are read at a time; DefaultPageSize
	// when zero.
	PageSize int
	// Progress, when set, is called before the first page and after each
	// page with the licences checked so far and the total the counters
	// hold (or the licences checked, when more).
	Progress func(done, total int64)
}

// Check runs every check on st with the master key m. An error is a
// failure to read, not a problem found.
func Check(ctx context.Context, st store.Store, m *signing.MasterKey, opts Options) (*Report, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	c := &checker{m: m, opts: opts, report: &Report{Problems: []Problem{}}}
	err := st.Snapshot(ctx, func(r store.Reader) error {
		c.r = r
		for _, step := range []func(context.Context) error{c.secrets, c.orphans, c.licences} {
			if err := step(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("check database: %w", err)
	}
	if c.omitted > 0 {
		c.report.Problems = append(c.report.Problems, Problem{Check: CheckReport, Kind: "report",
			Message: fmt.Sprintf("%d more problems are not listed", c.omitted)})
	}
	c.report.OK = len(c.report.Problems) == 0
	return c.report, nil
}

type checker struct {
	r       store.Reader
	m       *signing.MasterKey
	opts    Options
	report  *Report
	omitted int
}

func (c *checker) problem(check, kind, id, format string, args ...any) {
	if len(c.report.Problems) == MaxProblems {
		c.omitted++
		return
	}
	c.report.Problems = append(c.report.Problems, Problem{Check: check, Kind: kind, ID: id, Message: fmt.Sprintf(format, args...)})
}

// orphans reports rows whose parent row is missing.
func (c *checker) orphans(ctx context.Context) error {
	found, err := c.r.Orphans(ctx, MaxProblems)
	if err != nil {
		return err
	}
	for _, o := range found {
		switch o.Kind {
		case store.OrphanLicence:
			c.problem(CheckLicenceProduct, "licence", o.ID, "its product %s is missing", o.ParentID)
		case store.OrphanActivation:
			c.problem(CheckActivation, "activation", o.ID, "its licence %s is missing", o.ParentID)
		case store.OrphanDelivery:
			c.problem(CheckDelivery, "webhook_delivery", o.ID, "its event %s is missing", o.ParentID)
		}
	}
	return nil
}

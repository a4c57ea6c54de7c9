package integrity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/licentia/licentia/internal/store"
)

// counter names one licence_stats row.
type counter struct {
	orgID string
	store.StatsKey
}

func (k counter) String() string { return CounterName(k.orgID, k.StatsKey) }

// CounterName names the licence_stats row of an organization's licences of
// key k, as problems name it: every column of the row's primary key.
func CounterName(orgID string, k store.StatsKey) string {
	return fmt.Sprintf("%s/%s/%s/%s/%s/trial=%t/lapsed=%t/shard=%d",
		orgID, k.ProductID, k.Status, k.Source, k.Term, k.Trial, k.Lapsed, k.Shard)
}

type counts struct{ n, live int64 }

// licences reads every licence a page at a time, checks its
// live_activations against its activation rows, and recounts the
// licence_stats rows: each licence counts once in the row of its StatsKey
// at the sweep watermark, with its live activation rows. Only the recount
// (one entry per counter row) is kept, never the licences.
func (c *checker) licences(ctx context.Context) error {
	mark, err := c.r.Setting(ctx, store.SettingSweepWatermark)
	if err != nil {
		return err
	}
	w, err := store.ParseWatermark(mark)
	if err != nil {
		return err
	}
	// The counters are read first, in the same snapshot, so that progress
	// can be told against their total.
	stats, err := c.r.LicenceStats(ctx)
	if err != nil {
		return err
	}
	var total int64
	for _, row := range stats {
		total += row.N
	}
	if c.opts.Progress != nil {
		c.opts.Progress(0, total)
	}
	recount := map[counter]counts{}
	after := ""
	for {
		page, err := c.r.LicencesAfter(ctx, after, c.opts.PageSize)
		if err != nil {
			return err
		}
		for i := range page {
			l := &page[i]
			if l.LiveActivations != l.LiveRows {
				c.problem(CheckLiveActivations, "licence", l.ID, "live_activations is %d, its activations hold %d live", l.LiveActivations, l.LiveRows)
			}
			k := counter{l.OrgID, store.KeyOf(&l.Licence, w)}
			v := recount[k]
			recount[k] = counts{v.n + 1, v.live + l.LiveRows}
		}
		c.report.Checked.Licences += int64(len(page))
		if c.opts.Progress != nil {
			c.opts.Progress(c.report.Checked.Licences, max(total, c.report.Checked.Licences))
		}
		if len(page) < c.opts.PageSize {
			break
		}
		after = page[len(page)-1].ID
	}
	c.compare(stats, recount)
	return nil
}

// compare reports each counter row that differs from the recount, and each
// recounted row that has no counter.
func (c *checker) compare(rows []store.StatsRow, recount map[counter]counts) {
	for _, row := range rows {
		c.report.Checked.CounterRows++
		k := counter{row.OrgID, row.StatsKey}
		want := recount[k]
		delete(recount, k)
		if want != (counts{row.N, row.Live}) {
			c.problem(CheckLicenceCounters, "licence_stats", k.String(),
				"the counter holds %d licences with %d live activations, a recount finds %d with %d", row.N, row.Live, want.n, want.live)
		}
	}
	missing := slices.SortedFunc(maps.Keys(recount), func(a, b counter) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range missing {
		want := recount[k]
		c.problem(CheckLicenceCounters, "licence_stats", k.String(),
			"no counter holds these licences, a recount finds %d with %d live activations", want.n, want.live)
	}
}

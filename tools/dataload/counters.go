package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// counter is what a batch adds to one licence_stats row: licences and their
// live activations.
type counter struct {
	key     store.StatsKey
	n, live int64
}

// countRows returns the licence_stats changes of ls, each licence in the row
// the engines would have counted it in when writing it under sweep
// watermark w. The rows are in the order the PostgreSQL engine updates them
// (product, status, source, term, trial, lapsed, shard), so a batch never
// waits for a row held by a service transaction that waits for one it holds.
func countRows(ls []licentia.Licence, w time.Time) []counter {
	byKey := map[store.StatsKey]*counter{}
	for i := range ls {
		k := store.KeyOf(&ls[i], w)
		c := byKey[k]
		if c == nil {
			c = &counter{key: k}
			byKey[k] = c
		}
		c.n++
		c.live += ls[i].LiveActivations
	}
	out := make([]counter, 0, len(byKey))
	for _, c := range byKey {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b counter) int {
		x, y := a.key, b.key
		return cmp.Or(cmp.Compare(x.ProductID, y.ProductID), cmp.Compare(x.Status, y.Status),
			cmp.Compare(x.Source, y.Source), cmp.Compare(x.Term, y.Term), compareBool(x.Trial, y.Trial),
			compareBool(x.Lapsed, y.Lapsed), cmp.Compare(x.Shard, y.Shard))
	})
	return out
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// parseWatermark reads the stored sweep watermark as both engines do: Unix
// milliseconds, and the epoch when no sweep has run.
func parseWatermark(v string) (time.Time, error) {
	if v == "" {
		return store.FromMillis(0), nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("read sweep watermark %q: %w", v, err)
	}
	return store.FromMillis(ms), nil
}

package main

import (
	"slices"
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
	slices.SortFunc(out, func(a, b counter) int { return store.CompareStatsKeys(a.key, b.key) })
	return out
}

// Package ratelimit counts requests in fixed windows. The Limiter interface
// has an in-memory back end for one process and a Redis back end shared by
// every process; one suite holds both to the same behaviour.
package ratelimit

import (
	"context"
	"time"
)

// Rule is a named limit: at most Limit requests per Window for one subject.
type Rule struct {
	Name   string
	Limit  int64
	Window time.Duration
}

// The contract's limits.
var (
	Admin  = Rule{Name: "admin", Limit: 300, Window: time.Minute}
	Public = Rule{Name: "public", Limit: 30, Window: time.Minute}
	Lookup = Rule{Name: "lookup", Limit: 5, Window: time.Minute}
)

// Result is the outcome of counting one request.
type Result struct {
	Allowed   bool
	Limit     int64
	Remaining int64
	// Reset is the time until the window resets; a refused request may be
	// retried after it.
	Reset time.Duration
}

// Limiter counts a request against rule for key (a subject and a route) and
// says whether it is allowed.
type Limiter interface {
	Allow(ctx context.Context, rule Rule, key string) (Result, error)
}

// window returns the start of the fixed window holding now and the time left
// in it. Windows are aligned to the epoch so every process agrees on them.
func window(now time.Time, size time.Duration) (start int64, left time.Duration) {
	n := now.UnixNano()
	s := n - n%int64(size)
	return s, time.Duration(s + int64(size) - n)
}

func result(rule Rule, count int64, left time.Duration) Result {
	return Result{
		Allowed:   count <= rule.Limit,
		Limit:     rule.Limit,
		Remaining: max(rule.Limit-count, 0),
		Reset:     left,
	}
}

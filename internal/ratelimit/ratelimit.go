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

	// Failed console sign-ins, per address (email) and per client address
	// (sign_in): past either, even a right password is refused until the
	// window ends.
	SignInEmail   = Rule{Name: "sign_in_email", Limit: 10, Window: time.Minute}
	SignInAddress = Rule{Name: "sign_in", Limit: 30, Window: time.Minute}

	// OAuthRegister counts dynamic client registrations per client
	// address: an AI assistant registers once per installation, and each
	// registration is a row kept for good.
	OAuthRegister = Rule{Name: "oauth_register", Limit: 20, Window: time.Hour}

	// Customer portal sign-in links mailed, per address (email) and per
	// client address: each is a mail sent in the maker's name, so a
	// stranger cannot flood an inbox with them.
	PortalEmail   = Rule{Name: "portal_email", Limit: 3, Window: time.Hour}
	PortalAddress = Rule{Name: "portal", Limit: 20, Window: time.Hour}
)

// Result is the outcome of counting one request.
type Result struct {
	Allowed   bool
	Limit     int64
	Remaining int64
	// Reset is the time until the window resets; a refused request may be
	// retried after it.
	Reset time.Duration
	// Start is when the window that counted the request began, in the back
	// end's time: Release gives a request back to its own window only.
	Start time.Time
}

// Limiter counts a request against rule for key (a subject and a route) and
// says whether it is allowed.
type Limiter interface {
	Allow(ctx context.Context, rule Rule, key string) (Result, error)
	// Release gives back a request Allow counted, counted being what Allow
	// answered. A limit that counts only failures (console sign-ins)
	// counts every attempt before the work it guards, so that concurrent
	// attempts cannot all pass a check made before any of them failed, and
	// gives the count back when the attempt did not fail. A request of a
	// window that has ended needs no giving back, and gets none; a count
	// never goes below zero.
	Release(ctx context.Context, rule Rule, key string, counted Result) error
}

// window returns the start of the fixed window holding now and the time left
// in it. Windows are aligned to the epoch so every process agrees on them.
func window(now time.Time, size time.Duration) (start int64, left time.Duration) {
	n := now.UnixNano()
	s := n - n%int64(size)
	return s, time.Duration(s + int64(size) - n)
}

func result(rule Rule, count int64, start time.Time, left time.Duration) Result {
	return Result{
		Allowed:   count <= rule.Limit,
		Limit:     rule.Limit,
		Remaining: max(rule.Limit-count, 0),
		Reset:     left,
		Start:     start,
	}
}

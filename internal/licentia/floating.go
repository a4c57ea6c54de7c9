package licentia

import (
	"fmt"
	"time"
)

// Floating use: limits of the lease settings.
const (
	// MaxConcurrentLimit bounds max_concurrent.
	MaxConcurrentLimit = 100000
	// DefaultLeaseTTLSeconds is a new product's lease_ttl_seconds.
	DefaultLeaseTTLSeconds = 900
	// MinLeaseTTLSeconds and MaxLeaseTTLSeconds bound lease_ttl_seconds.
	MinLeaseTTLSeconds = 60
	MaxLeaseTTLSeconds = 86400
	// MaxBorrowHoursLimit bounds max_borrow_hours: 30 days, long enough
	// for a trip, short enough that a lost laptop gives its place back
	// within a month.
	MaxBorrowHoursLimit = 720
)

// ConcurrentAllowed is how many machines of l may hold a lease at once:
// its own setting, else its product's; nil when the count is off.
func (l *Licence) ConcurrentAllowed(p *Product) *int64 {
	if l.MaxConcurrent != nil {
		return l.MaxConcurrent
	}
	return p.MaxConcurrent
}

// LeaseTTL is how long a lease of p lasts without a renewal.
func (p *Product) LeaseTTL() time.Duration {
	if p.LeaseTTLSeconds <= 0 {
		return DefaultLeaseTTLSeconds * time.Second
	}
	return time.Duration(p.LeaseTTLSeconds) * time.Second
}

// ConcurrencyLimitReached is the error of a licence whose every place of
// concurrent use is held: retry is how long until the earliest lease in
// use ends.
func ConcurrencyLimitReached(limit, inUse int64, retry time.Duration) *Error {
	secs := int64((retry + time.Second - 1) / time.Second) // rounded up: asking sooner is refused
	return &Error{Code: CodeConcurrencyLimitReached,
		Message: fmt.Sprintf("All %d places of concurrent use of this licence are taken.", limit),
		Details: map[string]any{"limit": limit, "in_use": inUse, "retry_after_seconds": max(secs, 1)}}
}

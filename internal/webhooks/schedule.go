package webhooks

import (
	"math/rand/v2"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// retryDelays are the waits before each attempt after the first: about 55
// hours in all (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 24 h), so a
// receiver that is down for a weekend still gets every event. Each wait is
// spread by up to 10% either way, so deliveries failed together do not all
// come back at once.
var retryDelays = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 24 * time.Hour,
}

// MaxAttempts is how many attempts a delivery gets.
var MaxAttempts = len(retryDelays) + 1

// nextAttempt returns when to try again after attempts attempts, and false
// when they are spent.
func nextAttempt(attempts int, now time.Time) (time.Time, bool) {
	if attempts >= MaxAttempts {
		return time.Time{}, false
	}
	d := retryDelays[attempts-1]
	jitter := time.Duration((rand.Float64()*0.2 - 0.1) * float64(d))
	return licentia.TruncateMillis(now.Add(d + jitter)), true
}

package courier

import (
	"math/rand/v2"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// retryDelays are the waits before each attempt after the first: 8
// attempts over about a day (1 min, 5 min, 15 min, 1 h, 2 h, 6 h, 14 h:
// 23 h 21 min), so a mail server down for an hour, or a night, still gets
// every mail. Each wait is spread by up to 10% either way, so mails that
// failed together do not all come back at once.
var retryDelays = []time.Duration{
	time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 2 * time.Hour, 6 * time.Hour, 14 * time.Hour,
}

// MaxAttempts is how many attempts a mail gets.
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

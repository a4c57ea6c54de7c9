package ratelimit_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/ratelimit/ratelimittest"
)

// redisURL returns LICENTIA_TEST_REDIS_URL, skipping the test when it is
// unset (.ci/run always sets it).
func redisURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("LICENTIA_TEST_REDIS_URL")
	if url == "" {
		t.Skip("LICENTIA_TEST_REDIS_URL is unset; the Redis limiter is not tested")
	}
	return url
}

// newRedis returns a limiter whose keys no other test shares.
func newRedis(t *testing.T) *ratelimit.Redis {
	t.Helper()
	r, err := ratelimit.NewRedis(ratelimit.RedisOptions{URL: redisURL(t), Prefix: "licentia-test:" + licentia.NewID() + ":"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// serverClock reads the Redis server's time, the one its windows count in.
type serverClock struct{ r *ratelimit.Redis }

func (c serverClock) Now() time.Time {
	t, err := c.r.Now(context.Background())
	if err != nil {
		panic(err)
	}
	return t
}

func TestRedisSuite(t *testing.T) {
	ratelimittest.RunClock(t, func(t *testing.T) (ratelimit.Limiter, ratelimittest.Clock) {
		r := newRedis(t)
		return r, serverClock{r}
	})
}

// Two limiters on one Redis are one limit: what two processes see.
func TestRedisSharedBetweenLimiters(t *testing.T) {
	url := redisURL(t)
	prefix := "licentia-test:" + licentia.NewID() + ":"
	a, _ := ratelimit.NewRedis(ratelimit.RedisOptions{URL: url, Prefix: prefix})
	b, _ := ratelimit.NewRedis(ratelimit.RedisOptions{URL: url, Prefix: prefix})
	defer a.Close()
	defer b.Close()
	rule := ratelimit.Rule{Name: "shared", Limit: 10, Window: time.Hour}
	allowed := 0
	for i := range 20 {
		l := a
		if i%2 == 1 {
			l = b
		}
		res, err := l.Allow(t.Context(), rule, "subject")
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed {
			allowed++
		}
	}
	if allowed != 10 {
		t.Errorf("two limiters on one Redis allowed %d of 20, want 10", allowed)
	}
}

// TestDefaultRedisTimeoutMeasured: the default deadline is the one
// BENCHMARKS.md derives from the measured latency under load, so neither
// changes without the other.
func TestDefaultRedisTimeoutMeasured(t *testing.T) {
	raw, err := os.ReadFile("../../BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, "## Shared rate limiter under load")
	if i < 0 {
		t.Fatal("BENCHMARKS.md has no section on the shared rate limiter under load")
	}
	section := doc[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	want := fmt.Sprintf("`%v`", ratelimit.DefaultRedisTimeout)
	if !strings.Contains(section, "`ratelimit.DefaultRedisTimeout`") || !strings.Contains(section, want) {
		t.Errorf("BENCHMARKS.md's section does not name ratelimit.DefaultRedisTimeout and its value %s", want)
	}
}

package console_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/console"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/ratelimit"
)

// attempt is one sign-in of a burst: from client address addr.
type attempt struct{ addr, email, pw string }

// burstTimeout bounds each request of a burst. The checks of a burst
// queue for the password hashing, four at a time; on a loaded machine,
// under the race detector, the last would pass the default deadline, and
// an attempt that timed out checked nothing and answers 500.
const burstTimeout = time.Minute

// burst posts every attempt at once, spread over servers in turn, and
// returns how many answered each status. Each attempt has a client of its
// own, as separate browsers would.
func burst(t *testing.T, servers []*env, path string, attempts []attempt) map[int]int {
	t.Helper()
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		ready    sync.WaitGroup
		wg       sync.WaitGroup
	)
	start := make(chan struct{})
	ready.Add(len(attempts))
	for i, at := range attempts {
		e := servers[i%len(servers)]
		c := e.client()
		form := url.Values{"password": {at.pw}}
		if at.email != "" {
			form.Set("email", at.email)
		}
		wg.Go(func() {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.srv.URL+path, strings.NewReader(form.Encode()))
			if err != nil {
				t.Error(err)
				ready.Done()
				return
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", at.addr)
			ready.Done()
			<-start
			res, err := c.http.Do(req)
			if err != nil {
				t.Errorf("POST %s: %v", path, err)
				return
			}
			res.Body.Close()
			mu.Lock()
			statuses[res.StatusCode]++
			mu.Unlock()
		})
	}
	ready.Wait()
	close(start)
	wg.Wait()
	return statuses
}

// passwordChecks is how many passwords servers have checked together.
func passwordChecks(servers ...*env) int64 {
	var n int64
	for _, e := range servers {
		n += console.PasswordChecks(e.console)
	}
	return n
}

// wantBounded fails unless a burst checked at most limit passwords, each
// check answered 401 and every other attempt 429.
func wantBounded(t *testing.T, what string, statuses map[int]int, checks, limit int64, total int) {
	t.Helper()
	if checks > limit {
		t.Errorf("%s: %d passwords checked, want at most %d (statuses %v)", what, checks, limit, statuses)
	}
	if int64(statuses[http.StatusUnauthorized]) != checks || statuses[http.StatusUnauthorized]+statuses[http.StatusTooManyRequests] != total {
		t.Errorf("%s: statuses %v for %d checks of %d attempts, want a 401 per check and 429 for the rest", what, statuses, checks, total)
	}
}

// Fifty wrong passwords sent at once for one address, from fifty client
// addresses, run at most the ten password checks its limit allows; the
// rest answer 429, and so does the right password sent after them.
func TestSignInBurstPerAddress(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies, o.timeout = loopbackProxy, burstTimeout
		e := newEnv(t, o)
		e.owner(t)
		before := passwordChecks(e)
		var attempts []attempt
		for i := range 50 {
			attempts = append(attempts, attempt{fmt.Sprintf("198.51.100.%d", i+1), "owner@acme.example", "wrong password"})
		}
		statuses := burst(t, []*env{e}, "/console/sign-in", attempts)
		wantBounded(t, "50 wrong passwords at once", statuses, passwordChecks(e)-before, ratelimit.SignInEmail.Limit, 50)
		_, a := e.signInFrom(t, "203.0.113.50", "owner@acme.example", password)
		wantStatus(t, "right password after the burst", a, http.StatusTooManyRequests)
	})
}

// Fifty sign-ins to fifty addresses sent at once from one client address
// run at most the thirty password checks its limit allows.
func TestSignInBurstPerClient(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies, o.timeout = loopbackProxy, burstTimeout
		e := newEnv(t, o)
		e.owner(t)
		before := passwordChecks(e)
		const guesser = "198.51.100.7"
		var attempts []attempt
		for i := range 50 {
			attempts = append(attempts, attempt{guesser, fmt.Sprintf("someone%d@acme.example", i), "wrong password"})
		}
		statuses := burst(t, []*env{e}, "/console/sign-in", attempts)
		wantBounded(t, "50 sign-ins at once from one client", statuses, passwordChecks(e)-before, ratelimit.SignInAddress.Limit, 50)
		_, a := e.signInFrom(t, guesser, "owner@acme.example", password)
		wantStatus(t, "right password from the client after the burst", a, http.StatusTooManyRequests)
	})
}

// Two console processes sharing one Redis hold the limits together: fifty
// wrong passwords for one address sent at once, half to each, run at most
// ten password checks in all.
func TestSignInBurstSharedRedis(t *testing.T) {
	redisURL := os.Getenv("LICENTIA_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("LICENTIA_TEST_REDIS_URL is unset; limits shared through Redis are not tested")
	}
	onEngines(t, func(t *testing.T, o envOptions) {
		// Redis counts in its own clock's minutes: a run that crossed one
		// split its burst over two windows, and is made again afresh.
		for range 3 {
			prefix := "licentia-test:" + licentia.NewID() + ":"
			first, second := newRedisLimiter(t, redisURL, prefix), newRedisLimiter(t, redisURL, prefix)
			from := redisMinute(t, first)
			o.proxies, o.limiter, o.timeout = loopbackProxy, first, burstTimeout
			e := newEnv(t, o)
			e.owner(t)
			twin := e.twin(t, second)
			var attempts []attempt
			for i := range 50 {
				attempts = append(attempts, attempt{fmt.Sprintf("198.51.100.%d", i+1), "owner@acme.example", "wrong password"})
			}
			statuses := burst(t, []*env{e, twin}, "/console/sign-in", attempts)
			checks := passwordChecks(e, twin)
			_, a1 := e.signInFrom(t, "203.0.113.50", "owner@acme.example", password)
			_, a2 := twin.signInFrom(t, "203.0.113.51", "owner@acme.example", password)
			if !redisMinute(t, first).Equal(from) {
				continue
			}
			wantBounded(t, "50 wrong passwords at once to two processes", statuses, checks, ratelimit.SignInEmail.Limit, 50)
			wantStatus(t, "right password after the burst, first process", a1, http.StatusTooManyRequests)
			wantStatus(t, "right password after the burst, second process", a2, http.StatusTooManyRequests)
			return
		}
		t.Fatal("every run crossed a minute of the Redis server's clock")
	})
}

// newRedisLimiter is a Redis limiter with a deadline no loaded test
// machine reaches: a count that timed out would let its attempt through,
// and this test is about what the counts allow, not about the deadline.
func newRedisLimiter(t *testing.T, url, prefix string) *ratelimit.Redis {
	t.Helper()
	r, err := ratelimit.NewRedis(ratelimit.RedisOptions{URL: url, Prefix: prefix, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// redisMinute is the minute of the Redis server's clock, the window the
// sign-in limits count in there.
func redisMinute(t *testing.T, r *ratelimit.Redis) time.Time {
	t.Helper()
	now, err := r.Now(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return now.Truncate(time.Minute)
}

// twin is a second console process over e's store and services, counting
// in limiter.
func (e *env) twin(t *testing.T, limiter ratelimit.Limiter) *env {
	t.Helper()
	c, err := console.New(console.Options{Store: e.store, Admin: e.admin, Purchases: e.purchases, Activation: e.act, Clock: e.clock,
		Limiter: limiter, Logger: slog.New(slog.NewJSONHandler(e.logs, nil)), BaseURL: baseURL, TrustedProxies: loopbackProxy, DatabaseTimeout: burstTimeout, Metrics: e.metrics})
	if err != nil {
		t.Fatal(err)
	}
	twin := *e
	twin.console, twin.limiter, twin.srv = c, limiter, httptest.NewTLSServer(c.Handler())
	t.Cleanup(twin.srv.Close)
	return &twin
}

// An invitation link that asks for the account's current password is
// limited like a sign-in: fifty wrong passwords sent at once run at most
// ten checks, and the right one sent after them answers 429.
func TestJoinLinkBurst(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies, o.timeout = loopbackProxy, burstTimeout
		e := newEnv(t, o)
		other := e.otherOrg(t)
		e.signUp(t, other.ID, "boss@beta.example")
		owner := e.owner(t)
		wantSeeOther(t, "invite", owner.post(t, "/console/team/invitations",
			url.Values{"email": {"boss@beta.example"}, "role": {"support"}}), "/console/team?done=invited")
		link := e.mail.link(t, "boss@beta.example")
		before := passwordChecks(e)
		var attempts []attempt
		for i := range 50 {
			attempts = append(attempts, attempt{addr: fmt.Sprintf("198.51.100.%d", i+1), pw: "wrong password"})
		}
		statuses := burst(t, []*env{e}, link, attempts)
		wantBounded(t, "50 wrong passwords at once on a link", statuses, passwordChecks(e)-before, ratelimit.SignInEmail.Limit, 50)
		c := e.client()
		c.headers["X-Forwarded-For"] = "203.0.113.9"
		wantStatus(t, "right password after the burst", c.post(t, link, url.Values{"password": {password}}), http.StatusTooManyRequests)
	})
}

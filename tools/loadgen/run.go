package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// runConfig is how a run is driven.
type runConfig struct {
	concurrency int
	rate        float64 // requests a second; 0 is closed-loop
	duration    time.Duration
	forwarded   bool
}

// drainGrace is how long an open-loop run goes on sending requests that
// fell due before its end but could not be sent in time, before it gives
// up on them and counts them unsent.
const drainGrace = 10 * time.Second

// request is one request a scenario makes.
type request struct {
	method string
	path   string
	body   []byte
	key    string // admin API key, or "" for a public route
	// onOK, when set, is given the body of a 2xx answer.
	onOK func(body []byte)
	// op names the operation of a scenario mixing several, which the
	// report also counts apart; "" in a scenario of one.
	op string
}

// scenarioFunc returns the request numbered seq; numbers are distinct
// across a run and start at 0.
type scenarioFunc func(seq uint64) request

// results are the raw outcomes of a run.
type results struct {
	mu        sync.Mutex
	requests  int64
	succeeded int64
	unsent    int64
	latencies []time.Duration
	errors    map[string]int64
	ops       map[string]*opTally // by request.op, in a mixed scenario
}

func (r *results) add(t *tally) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latencies = append(r.latencies, t.lat...)
	r.requests += t.n
	r.succeeded += t.ok
	if r.errors == nil {
		r.errors = map[string]int64{}
	}
	for k, v := range t.errors {
		r.errors[k] += v
	}
	for name, o := range t.ops {
		if r.ops == nil {
			r.ops = map[string]*opTally{}
		}
		if r.ops[name] == nil {
			r.ops[name] = &opTally{}
		}
		r.ops[name].add(o)
	}
}

// opTally counts one operation of a mixed scenario.
type opTally struct {
	lat   []time.Duration
	ok, n int64
}

func (o *opTally) add(other *opTally) {
	o.lat = append(o.lat, other.lat...)
	o.ok += other.ok
	o.n += other.n
}

// client sends requests to one server.
type client struct {
	base string
	http *http.Client
	xff  atomic.Uint32 // last X-Forwarded-For address handed out
}

func newClient(base string, conns int) *client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns + 16
	t.MaxIdleConnsPerHost = conns + 16
	c := &client{base: base, http: &http.Client{Transport: t, Timeout: 30 * time.Second}}
	// Start the addresses at a random place, so that runs following each
	// other within the limit's minute do not reuse the same ones.
	c.xff.Store(rand.Uint32())
	return c
}

// nextAddr returns a distinct address in 10.0.0.0/8 for X-Forwarded-For.
func (c *client) nextAddr() string {
	n := c.xff.Add(1)%(1<<24-2) + 1
	return fmt.Sprintf("10.%d.%d.%d", n>>16&0xff, n>>8&0xff, n&0xff)
}

// answer is what the server answered.
type answer struct {
	status int
	code   string // the error envelope's code, for a status of 300 or more
	body   []byte
	// retryAfter is the wait a 429 asks for (Retry-After-admin or
	// Retry-After-public), or 0.
	retryAfter time.Duration
}

// send sends req and reads the whole answer.
func (c *client) send(ctx context.Context, req request, forwarded bool) (answer, error) {
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, c.base+req.path, body)
	if err != nil {
		return answer{}, err
	}
	if req.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.key != "" {
		hr.Header.Set("Authorization", "Bearer "+req.key)
	}
	if forwarded {
		hr.Header.Set("X-Forwarded-For", c.nextAddr())
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode}
	if a.body, err = io.ReadAll(resp.Body); err != nil {
		return a, err
	}
	if a.status >= 300 {
		var env struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(a.body, &env) == nil {
			a.code = env.Error.Code
		}
	}
	for _, h := range []string{"Retry-After-admin", "Retry-After-public"} {
		if s, err := strconv.Atoi(resp.Header.Get(h)); err == nil && s > 0 {
			a.retryAfter = time.Duration(s) * time.Second
		}
	}
	return a, nil
}

// do sends req and returns its status, its error code when it failed and
// its body.
func (c *client) do(ctx context.Context, req request, forwarded bool) (int, string, []byte, error) {
	a, err := c.send(ctx, req, forwarded)
	return a.status, a.code, a.body, err
}

// sender sends one request and returns its status, its error code when it
// failed and its body; *client sends over HTTP.
type sender interface {
	do(ctx context.Context, req request, forwarded bool) (int, string, []byte, error)
}

// tally is one goroutine's share of the results, merged at the end.
type tally struct {
	lat    []time.Duration
	ok, n  int64
	errors map[string]int64
	ops    map[string]*opTally
}

// record sends req and counts its outcome, with its latency counted from
// start.
func (t *tally) record(ctx context.Context, c sender, req request, forwarded bool, start time.Time) {
	status, code, body, err := c.do(ctx, req, forwarded)
	lat := time.Since(start)
	if err != nil && ctx.Err() != nil {
		return // cut off by an interrupt: not counted
	}
	t.n++
	t.lat = append(t.lat, lat)
	ok := err == nil && status >= 200 && status < 300
	switch {
	case err != nil:
		t.fail("transport", req.op)
	case ok:
		t.ok++
		if req.onOK != nil {
			req.onOK(body)
		}
	default:
		if code == "" {
			code = "-"
		}
		t.fail(fmt.Sprintf("%d %s", status, code), req.op)
	}
	if req.op != "" {
		if t.ops == nil {
			t.ops = map[string]*opTally{}
		}
		o := t.ops[req.op]
		if o == nil {
			o = &opTally{}
			t.ops[req.op] = o
		}
		o.n++
		o.lat = append(o.lat, lat)
		if ok {
			o.ok++
		}
	}
}

// fail counts an error, under its operation's name in a mixed scenario.
func (t *tally) fail(k, op string) {
	if op != "" {
		k += " (" + op + ")"
	}
	if t.errors == nil {
		t.errors = map[string]int64{}
	}
	t.errors[k]++
}

// drive runs scenario against c for cfg.duration and returns what it
// measured and how long it ran, from the first request to the end of the
// last. Requests in flight when the duration is up are waited for and
// counted: leaving them out would drop the slowest.
func drive(ctx context.Context, c sender, scenario scenarioFunc, cfg runConfig) (*results, time.Duration) {
	if cfg.rate > 0 {
		return driveOpen(ctx, c, scenario, cfg)
	}
	res := &results{}
	var wg sync.WaitGroup
	var seq atomic.Uint64
	start := time.Now()
	end := start.Add(cfg.duration)
	for range cfg.concurrency {
		wg.Go(func() {
			var t tally
			for ctx.Err() == nil && time.Now().Before(end) {
				t.record(ctx, c, scenario(seq.Add(1)-1), cfg.forwarded, time.Now())
			}
			res.add(&t)
		})
	}
	wg.Wait()
	return res, time.Since(start)
}

// driveOpen runs the open loop: request i is due at start + i/rate,
// whatever happened to the ones before, and its latency counts from then.
// cfg.concurrency workers send them; when all are busy, the requests
// falling due wait for one, and that wait counts in their latency, so a
// server that stalls shows in the percentiles instead of slowing the
// load down (coordinated omission). Requests still waiting drainGrace
// after the end are counted unsent.
func driveOpen(ctx context.Context, c sender, scenario scenarioFunc, cfg runConfig) (*results, time.Duration) {
	res := &results{}
	var wg sync.WaitGroup
	var taken, sent atomic.Int64
	total := int64(cfg.duration.Seconds() * cfg.rate)
	start := time.Now()
	giveUp := start.Add(cfg.duration + drainGrace)
	for range cfg.concurrency {
		wg.Go(func() {
			var t tally
			for {
				i := taken.Add(1) - 1
				if i >= total {
					break
				}
				due := start.Add(time.Duration(float64(i) / cfg.rate * float64(time.Second)))
				if !sleepUntil(ctx, due) || time.Now().After(giveUp) {
					break
				}
				sent.Add(1)
				t.record(ctx, c, scenario(uint64(i)), cfg.forwarded, due)
			}
			res.add(&t)
		})
	}
	wg.Wait()
	res.unsent = total - sent.Load()
	return res, time.Since(start)
}

// sleepUntil waits until t and reports whether ctx is still live.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

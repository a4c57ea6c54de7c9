package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// request is one request a scenario makes; worker is the closed-loop
// worker (or, open-loop, the request number modulo the concurrency) and
// seq a number distinct across the run.
type request struct {
	method string
	path   string
	body   []byte
	key    string // admin API key, or "" for a public route
}

type scenarioFunc func(worker int, seq uint64) request

// results are the raw outcomes of a run.
type results struct {
	mu        sync.Mutex
	requests  int64
	succeeded int64
	dropped   int64
	latencies []time.Duration
	errors    map[string]int64
}

func (r *results) add(lat []time.Duration, ok, n int64, errs map[string]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latencies = append(r.latencies, lat...)
	r.requests += n
	r.succeeded += ok
	if r.errors == nil {
		r.errors = map[string]int64{}
	}
	for k, v := range errs {
		r.errors[k] += v
	}
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
	return &client{base: base, http: &http.Client{Transport: t, Timeout: 30 * time.Second}}
}

// nextAddr returns a distinct address in 10.0.0.0/8 for X-Forwarded-For.
func (c *client) nextAddr() string {
	n := c.xff.Add(1)%(1<<24-2) + 1
	return fmt.Sprintf("10.%d.%d.%d", n>>16&0xff, n>>8&0xff, n&0xff)
}

// do sends req and returns its status, its error code when it failed and
// its body.
func (c *client) do(ctx context.Context, req request, forwarded bool) (int, string, []byte, error) {
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, c.base+req.path, body)
	if err != nil {
		return 0, "", nil, err
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
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, "", nil, err
	}
	code := ""
	if resp.StatusCode >= 300 {
		var env struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &env) == nil {
			code = env.Error.Code
		}
	}
	return resp.StatusCode, code, raw, nil
}

// tally is one goroutine's share of the results, merged at the end.
type tally struct {
	lat    []time.Duration
	ok, n  int64
	errors map[string]int64
}

func (t *tally) record(ctx context.Context, c *client, req request, forwarded bool, start time.Time) {
	status, code, _, err := c.do(ctx, req, forwarded)
	lat := time.Since(start)
	if err != nil && ctx.Err() != nil {
		return // cut off by the end of the run: not counted
	}
	t.n++
	t.lat = append(t.lat, lat)
	switch {
	case err != nil:
		t.fail("transport")
	case status >= 200 && status < 300:
		t.ok++
	default:
		if code == "" {
			code = "-"
		}
		t.fail(fmt.Sprintf("%d %s", status, code))
	}
}

func (t *tally) fail(k string) {
	if t.errors == nil {
		t.errors = map[string]int64{}
	}
	t.errors[k]++
}

// drive runs scenario against c for cfg.duration and returns what it
// measured and how long it ran.
func drive(ctx context.Context, c *client, scenario scenarioFunc, cfg runConfig) (*results, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, cfg.duration)
	defer cancel()
	res := &results{}
	var wg sync.WaitGroup
	var seq atomic.Uint64
	start := time.Now()
	if cfg.rate <= 0 {
		for w := range cfg.concurrency {
			wg.Go(func() {
				var t tally
				for ctx.Err() == nil {
					t.record(ctx, c, scenario(w, seq.Add(1)), cfg.forwarded, time.Now())
				}
				res.add(t.lat, t.ok, t.n, t.errors)
			})
		}
		wg.Wait()
		return res, time.Since(start)
	}
	// Open loop: request i is due at start + i/rate, whatever happened to
	// the ones before, and its latency counts from then. At most
	// cfg.concurrency are in flight; a request due when all are busy is
	// dropped and counted.
	interval := time.Duration(float64(time.Second) / cfg.rate)
	slots := make(chan struct{}, cfg.concurrency)
	var dropped atomic.Int64
	for i := int64(0); ; i++ {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case slots <- struct{}{}:
		default:
			dropped.Add(1)
			continue
		}
		n := seq.Add(1)
		wg.Go(func() {
			defer func() { <-slots }()
			var t tally
			t.record(ctx, c, scenario(int(n%uint64(cfg.concurrency)), n), cfg.forwarded, due)
			res.add(t.lat, t.ok, t.n, t.errors)
		})
	}
	wg.Wait()
	res.dropped = dropped.Load()
	return res, time.Since(start)
}

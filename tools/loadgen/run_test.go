package main

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeSender answers every request after the time slow gives for its
// number, in the bubble's fake time, and remembers the requests.
type fakeSender struct {
	mu   sync.Mutex
	n    int
	reqs []request
	slow func(n int) time.Duration
}

func (f *fakeSender) do(ctx context.Context, req request, _ bool) (int, string, []byte, error) {
	f.mu.Lock()
	n := f.n
	f.n++
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	time.Sleep(f.slow(n))
	return 200, "", []byte(`{}`), nil
}

func msList(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = ms(d)
	}
	return out
}

// TestDriveOpenCountsFromDue checks the open loop against coordinated
// omission: one worker, a request due every 10ms, and the first answer
// takes 100ms. The ten requests that fell due meanwhile are sent late, one
// after another, and each one's latency counts from when it was due.
func TestDriveOpenCountsFromDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeSender{slow: func(n int) time.Duration {
			if n == 0 {
				return 100 * time.Millisecond
			}
			return time.Millisecond
		}}
		seqs := make(chan uint64, 100)
		scenario := func(seq uint64) request { seqs <- seq; return request{method: "GET", path: "/"} }
		res, elapsed := drive(t.Context(), f, scenario, runConfig{concurrency: 1, rate: 100, duration: 200 * time.Millisecond})
		if res.requests != 20 || res.succeeded != 20 || res.unsent != 0 {
			t.Errorf("requests, succeeded, unsent = %d, %d, %d; want 20, 20, 0", res.requests, res.succeeded, res.unsent)
		}
		// Request k (k = 1..11) is due at 10k ms and sent when request k-1
		// is answered, at 99+k ms: it waits 100-9k ms, then takes 1ms.
		want := []float64{100, 91, 82, 73, 64, 55, 46, 37, 28, 19, 10, 1, 1, 1, 1, 1, 1, 1, 1, 1}
		if got := msList(res.latencies); !slices.Equal(got, want) {
			t.Errorf("latencies = %v, want %v", got, want)
		}
		if elapsed != 191*time.Millisecond {
			t.Errorf("elapsed = %v, want 191ms (the last request is due at 190ms)", elapsed)
		}
		close(seqs)
		var got []uint64
		for s := range seqs {
			got = append(got, s)
		}
		if want := []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}; !slices.Equal(got, want) {
			t.Errorf("sequence numbers = %v, want %v", got, want)
		}
	})
}

// TestDriveOpenUnsent checks that requests still waiting drainGrace after
// the end are counted unsent, not left out silently.
func TestDriveOpenUnsent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeSender{slow: func(int) time.Duration { return 30 * time.Second }}
		res, _ := drive(t.Context(), f, func(uint64) request { return request{} }, runConfig{concurrency: 2, rate: 10, duration: time.Second})
		// Two workers send requests 0 and 1 (due at 0 and 100ms); both are
		// answered at 30s, past the end plus drainGrace, so 8 stay unsent.
		if res.requests != 2 || res.unsent != 8 {
			t.Errorf("requests, unsent = %d, %d; want 2, 8", res.requests, res.unsent)
		}
		if got, want := msList(res.latencies), []float64{30000, 30000}; !slices.Equal(got, want) {
			t.Errorf("latencies = %v, want %v", got, want)
		}
	})
}

// TestDriveClosedWaitsForLast checks that the closed loop counts the
// requests in flight at the end instead of cutting them off.
func TestDriveClosedWaitsForLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeSender{slow: func(int) time.Duration { return 30 * time.Millisecond }}
		res, elapsed := drive(t.Context(), f, func(uint64) request { return request{} }, runConfig{concurrency: 2, duration: 100 * time.Millisecond})
		// Each worker starts requests at 0, 30, 60 and 90ms; the last ends at 120ms.
		if res.requests != 8 || elapsed != 120*time.Millisecond {
			t.Errorf("requests, elapsed = %d, %v; want 8, 120ms", res.requests, elapsed)
		}
		if l := latencyOf(res.latencies); l.P50 != 30 || l.Max != 30 {
			t.Errorf("latency = %+v, want all 30ms", l)
		}
	})
}

func TestRecordOutcomes(t *testing.T) {
	var got []string
	ok := request{onOK: func(b []byte) { got = append(got, string(b)) }}
	var tl tally
	for _, a := range []struct {
		status int
		code   string
	}{{200, ""}, {429, "rate_limited"}, {429, "rate_limited"}, {500, ""}} {
		s := senderFunc(func() (int, string, []byte, error) { return a.status, a.code, []byte("body"), nil })
		tl.record(t.Context(), s, ok, false, time.Now())
	}
	if tl.n != 4 || tl.ok != 1 {
		t.Errorf("n, ok = %d, %d; want 4, 1", tl.n, tl.ok)
	}
	if want := map[string]int64{"429 rate_limited": 2, "500 -": 1}; !maps.Equal(tl.errors, want) {
		t.Errorf("errors = %v, want %v", tl.errors, want)
	}
	if !slices.Equal(got, []string{"body"}) {
		t.Errorf("onOK saw %q, want the one 2xx body", got)
	}
}

type senderFunc func() (int, string, []byte, error)

func (f senderFunc) do(context.Context, request, bool) (int, string, []byte, error) { return f() }

// TestRecordOps: the requests of a mixed scenario are counted by operation
// too, errors named with theirs, and the report shows each apart while a
// 429 still counts as throttled.
func TestRecordOps(t *testing.T) {
	var tl tally
	for _, a := range []struct {
		op     string
		status int
		code   string
	}{{"issue", 201, ""}, {"issue", 429, "rate_limited"}, {"activate", 201, ""}, {"activate", 200, ""}, {"activate", 500, "internal_error"}} {
		s := senderFunc(func() (int, string, []byte, error) { return a.status, a.code, nil, nil })
		tl.record(t.Context(), s, request{op: a.op}, false, time.Now())
	}
	var res results
	res.add(&tl)
	r := newReport("x", "mixed", runConfig{concurrency: 1}, &res, time.Second)
	if r.Requests != 5 || r.Succeeded != 3 || r.Throttled != 1 {
		t.Errorf("requests, succeeded, throttled = %d, %d, %d; want 5, 3, 1", r.Requests, r.Succeeded, r.Throttled)
	}
	if want := map[string]int64{"429 rate_limited (issue)": 1, "500 internal_error (activate)": 1}; !maps.Equal(r.Errors, want) {
		t.Errorf("errors = %v, want %v", r.Errors, want)
	}
	issue, act := r.Ops["issue"], r.Ops["activate"]
	if len(r.Ops) != 2 || issue.Requests != 2 || issue.Succeeded != 1 || act.Requests != 3 || act.Succeeded != 2 || act.Throughput != 3 {
		t.Errorf("ops = issue %+v, activate %+v; want 2 issues (1 succeeded) and 3 activations (2 succeeded, 3/s)", issue, act)
	}
}

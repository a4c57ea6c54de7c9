package ratelimit_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/logtest"
	"github.com/licentia/licentia/internal/metrics"
	"github.com/licentia/licentia/internal/ratelimit"
	"github.com/licentia/licentia/internal/ratelimit/ratelimittest"
)

// visibleFallback is a Fallback over a shared limiter a test can take
// down, with its log and metrics.
type visibleFallback struct {
	f       *ratelimit.Fallback
	shared  *switchable
	clk     *clock.Fake
	logs    *logtest.Buffer
	metrics *metrics.Metrics
}

func newVisibleFallback(t *testing.T) *visibleFallback {
	t.Helper()
	clk := clock.NewFake(ratelimittest.Start)
	v := &visibleFallback{shared: &switchable{Limiter: ratelimit.NewMemory(clk)}, clk: clk, logs: &logtest.Buffer{},
		metrics: metrics.New(metrics.Options{})}
	log := slog.New(slog.NewJSONHandler(v.logs, nil))
	v.f = ratelimit.NewFallback(v.shared, ratelimit.NewMemory(clk), clk, log, v.metrics)
	return v
}

func (v *visibleFallback) allow(t *testing.T) {
	t.Helper()
	if _, err := v.f.Allow(t.Context(), ratelimit.Admin, "k"); err != nil {
		t.Fatalf("Allow() error = %v", err)
	}
}

// lines counts the log lines holding msg.
func (v *visibleFallback) lines(msg string) int {
	return strings.Count(v.logs.String(), `"msg":"`+msg+`"`)
}

const (
	unreachable = "shared rate limiter unreachable; counting per process"
	reachable   = "shared rate limiter reachable again"
)

// While the shared limiter stays down, the warning is logged when the
// fallback starts and then once a minute, however many requests come.
func TestFallbackWarnsOnceAMinute(t *testing.T) {
	v := newVisibleFallback(t)
	v.shared.down = true
	for range 150 {
		v.allow(t)
		v.allow(t)
		v.clk.Advance(time.Second)
	}
	// Requests at 0 s to 149 s: warnings at 0, 60 and 120 s.
	if got := v.lines(unreachable); got != 3 {
		t.Errorf("%d warnings over 150 s of an outage, want 3 (one a minute):\n%s", got, v.logs)
	}
	if !strings.Contains(v.logs.String(), `"level":"WARN","msg":"`+unreachable+`"`) {
		t.Errorf("the outage is not logged as a warning:\n%s", v.logs)
	}
	if !strings.Contains(v.logs.String(), `"counted_per_process":120`) {
		t.Errorf("the warning at 120 s does not count the 120 requests counted per process since the last:\n%s", v.logs)
	}
	v.shared.down = false
	v.allow(t)
	if got := v.lines(reachable); got != 1 {
		t.Errorf("%d lines saying Redis is reachable again, want 1:\n%s", got, v.logs)
	}
}

// A shared limiter that comes and goes logs no more than a warning and
// its end a minute.
func TestFallbackFlappingWarnsOnceAMinute(t *testing.T) {
	v := newVisibleFallback(t)
	for i := range 120 {
		v.shared.down = i%2 == 0
		v.allow(t)
		v.clk.Advance(time.Second)
	}
	if got, ends := v.lines(unreachable), v.lines(reachable); got != 2 || ends != 2 {
		t.Errorf("60 outages in 120 s logged %d warnings and %d ends, want 2 of each (one a minute):\n%s", got, ends, v.logs)
	}
}

// The gauge says whether the process counts on its own, and the counter
// how many requests it counted so.
func TestFallbackMetrics(t *testing.T) {
	v := newVisibleFallback(t)
	want := func(fallback, counted float64) {
		t.Helper()
		g, err := v.metrics.Gatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range g {
			for _, m := range f.GetMetric() {
				switch f.GetName() {
				case "licentia_rate_limiter_fallback":
					got[f.GetName()] = m.GetGauge().GetValue()
				case "licentia_rate_limiter_fallback_requests_total":
					got[f.GetName()] = m.GetCounter().GetValue()
				}
			}
		}
		if got["licentia_rate_limiter_fallback"] != fallback || got["licentia_rate_limiter_fallback_requests_total"] != counted {
			t.Errorf("metrics = %v, want fallback %v and %v requests counted per process", got, fallback, counted)
		}
	}
	n, err := testutil.GatherAndCount(v.metrics.Gatherer(), "licentia_rate_limiter_fallback", "licentia_rate_limiter_fallback_requests_total")
	if err != nil || n != 2 {
		t.Errorf("GatherAndCount() before any request = %d, %v; want both series, at 0", n, err)
	}
	want(0, 0)
	v.allow(t)
	want(0, 0)
	v.shared.down = true
	for range 3 {
		v.allow(t)
	}
	want(1, 3)
	v.shared.down = false
	v.clk.Advance(time.Second)
	v.allow(t)
	want(0, 3)
}

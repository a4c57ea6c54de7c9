package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {90, 90 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := percentile(s, tc.p); got != tc.want {
			t.Errorf("percentile(1..100ms, %v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile(nil, 50) = %v, want 0", got)
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("percentile([7], 99) = %v, want 7", got)
	}
}

func TestReport(t *testing.T) {
	res := &results{
		requests: 4, succeeded: 3,
		latencies: []time.Duration{4 * time.Millisecond, 1 * time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond},
		errors:    map[string]int64{"429 rate_limited": 1},
	}
	r := newReport("http://x", "status", runConfig{concurrency: 2}, res, 2*time.Second)
	if r.Throughput != 2 || r.Mode != "closed" {
		t.Errorf("throughput, mode = %v, %q; want 2, closed", r.Throughput, r.Mode)
	}
	if want := (Latency{P50: 2, P90: 4, P99: 4, Max: 4}); r.Latency != want {
		t.Errorf("latency = %+v, want %+v", r.Latency, want)
	}
	r.CPU = &CPU{PerRequest: 0.4}
	floor := &Report{Throughput: 8, Latency: Latency{P50: 1, P90: 2, P99: 2, Max: 8}, CPU: &CPU{PerRequest: 0.1}}
	ratio := ratioOf(r, floor)
	if ratio.Throughput != 0.25 || ratio.P50 != 2 || ratio.P90 != 2 || ratio.Max != 0.5 || ratio.CPU == nil || *ratio.CPU != 4 {
		t.Errorf("ratioOf() = %+v", ratio)
	}
	var buf bytes.Buffer
	if err := writeTable(&buf, []*Report{r, floor}, []string{"status", "floor"}, &ratio); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"req/s", "0.25x", "cpu ms/req", "4.00x", "error 429 rate_limited (status)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestParseStat(t *testing.T) {
	line := "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 8 0 100 0 0\n"
	got, err := parseStat(line)
	if err != nil || got != 325 {
		t.Errorf("parseStat() = %d, %v; want 325, nil", got, err)
	}
	if _, err := parseStat("garbage"); err == nil {
		t.Error("parseStat(garbage) error = nil")
	}
}

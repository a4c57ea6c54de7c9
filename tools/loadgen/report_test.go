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
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {90, 90 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := percentile(s, tt.p); got != tt.want {
			t.Errorf("percentile(1..100ms, %v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile(nil, 50) = %v, want 0", got)
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("percentile([7], 99) = %v, want 7", got)
	}
	// Nearest rank over 1,000 samples: p99 is the 990th, so the ten
	// slowest are above it.
	s = s[:0]
	for i := 1; i <= 1000; i++ {
		s = append(s, time.Duration(i))
	}
	if got := percentile(s, 99); got != 990 {
		t.Errorf("percentile(1..1000, 99) = %v, want 990", got)
	}
}

func TestReport(t *testing.T) {
	res := &results{
		requests: 4, succeeded: 3,
		latencies: []time.Duration{4 * time.Millisecond, 1 * time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond},
		errors:    map[string]int64{"429 rate_limited": 1},
	}
	r := newReport("http://x", "find", runConfig{concurrency: 2}, res, 2*time.Second)
	if r.Throughput != 2 || r.Mode != "closed" || r.Throttled != 1 {
		t.Errorf("throughput, mode, throttled = %v, %q, %d; want 2, closed, 1", r.Throughput, r.Mode, r.Throttled)
	}
	if want := (Latency{P50: 2, P90: 4, P99: 4, Max: 4}); r.Latency != want {
		t.Errorf("latency = %+v, want %+v", r.Latency, want)
	}
	r.warn()
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "throttled: 1 of 4") || !strings.Contains(r.Warnings[0], "more keys") {
		t.Errorf("warnings = %q, want one saying 1 of 4 were throttled and to give more keys", r.Warnings)
	}
	r.CPU = &CPU{PerRequest: 0.4}
	r.Memory = &Memory{RSSMB: 50, PeakMB: 60}
	floor := &Report{Throughput: 8, Latency: Latency{P50: 1, P90: 2, P99: 2, Max: 8}, CPU: &CPU{PerRequest: 0.1}}
	ratio := ratioOf(r, floor)
	if ratio.Throughput != 0.25 || ratio.P50 != 2 || ratio.P90 != 2 || ratio.Max != 0.5 || ratio.CPU == nil || *ratio.CPU != 4 {
		t.Errorf("ratioOf() = %+v", ratio)
	}
	var buf bytes.Buffer
	if err := writeTable(&buf, []*Report{r, floor}, []string{"find", "floor"}, &ratio); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"req/s", "0.25x", "cpu ms/req", "4.00x", "peak rss MB", "60.0", "error 429 rate_limited (find)", "warning (find): throttled"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestWarn(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    Report
		want []string // substrings, one per warning
	}{
		{"clean closed", Report{Mode: "closed", Requests: 10, Throughput: 5}, nil},
		{"clean open", Report{Mode: "open", Rate: 100, Throughput: 99}, nil},
		{"public throttled", Report{Scenario: "status", Requests: 10, Throttled: 3}, []string{"LICENTIA_TRUSTED_PROXIES"}},
		{"unsent", Report{Mode: "open", Rate: 100, Throughput: 50, Unsent: 7}, []string{"7 requests due were never sent"}},
		{"slow open", Report{Mode: "open", Rate: 100, Throughput: 80}, []string{"80.0 req/s achieved of 100.0"}},
		{"quiet machine", Report{Machine: &Machine{Cores: 1.9, OtherCores: 0.05}}, nil},
		{"busy machine", Report{Machine: &Machine{Cores: 2, OtherCores: 0.6}}, []string{"other processes kept 0.60 cores busy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.warn()
			if len(tt.r.Warnings) != len(tt.want) {
				t.Fatalf("warnings = %q, want %d", tt.r.Warnings, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(tt.r.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, tt.r.Warnings[i], w)
				}
			}
		})
	}
}

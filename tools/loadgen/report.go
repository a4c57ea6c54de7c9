package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Latency holds the latency figures of a run, in milliseconds.
type Latency struct {
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// CPU is the server's CPU time over a run, read from /proc/<pid>/stat.
type CPU struct {
	PID        int     `json:"pid"`
	Seconds    float64 `json:"seconds"`
	PerRequest float64 `json:"ms_per_request"`
}

// Report is what one run measured.
type Report struct {
	Target      string           `json:"target"`
	Scenario    string           `json:"scenario"`
	Mode        string           `json:"mode"` // closed or open
	Concurrency int              `json:"concurrency"`
	Rate        float64          `json:"rate,omitempty"`
	Seconds     float64          `json:"seconds"`
	Requests    int64            `json:"requests"`
	Succeeded   int64            `json:"succeeded"`
	Dropped     int64            `json:"dropped,omitempty"`
	Throughput  float64          `json:"throughput_rps"`
	Latency     Latency          `json:"latency"`
	Errors      map[string]int64 `json:"errors"`
	CPU         *CPU             `json:"server_cpu,omitempty"`
}

// Ratio is each figure of a real run divided by the floor's.
type Ratio struct {
	Throughput float64  `json:"throughput"`
	P50        float64  `json:"p50"`
	P90        float64  `json:"p90"`
	P99        float64  `json:"p99"`
	Max        float64  `json:"max"`
	CPU        *float64 `json:"cpu_per_request,omitempty"`
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method, or 0 for no samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(n))) - 1
	i = min(max(i, 0), n-1)
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// latencyOf sorts samples in place and summarises them.
func latencyOf(samples []time.Duration) Latency {
	slices.Sort(samples)
	var l Latency
	if len(samples) == 0 {
		return l
	}
	l.P50 = ms(percentile(samples, 50))
	l.P90 = ms(percentile(samples, 90))
	l.P99 = ms(percentile(samples, 99))
	l.Max = ms(samples[len(samples)-1])
	return l
}

// newReport builds a report from the raw results of a run.
func newReport(target, scenario string, cfg runConfig, res *results, elapsed time.Duration) *Report {
	r := &Report{
		Target:      target,
		Scenario:    scenario,
		Mode:        "closed",
		Concurrency: cfg.concurrency,
		Rate:        cfg.rate,
		Seconds:     elapsed.Seconds(),
		Requests:    res.requests,
		Succeeded:   res.succeeded,
		Dropped:     res.dropped,
		Latency:     latencyOf(res.latencies),
		Errors:      res.errors,
	}
	if cfg.rate > 0 {
		r.Mode = "open"
	}
	if r.Errors == nil {
		r.Errors = map[string]int64{}
	}
	if elapsed > 0 {
		r.Throughput = float64(res.requests) / elapsed.Seconds()
	}
	return r
}

// div is a/b, or 0 when b is 0.
func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// ratioOf divides each figure of real by floor's.
func ratioOf(real, floor *Report) Ratio {
	r := Ratio{
		Throughput: div(real.Throughput, floor.Throughput),
		P50:        div(real.Latency.P50, floor.Latency.P50),
		P90:        div(real.Latency.P90, floor.Latency.P90),
		P99:        div(real.Latency.P99, floor.Latency.P99),
		Max:        div(real.Latency.Max, floor.Latency.Max),
	}
	if real.CPU != nil && floor.CPU != nil {
		c := div(real.CPU.PerRequest, floor.CPU.PerRequest)
		r.CPU = &c
	}
	return r
}

// writeTable prints the reports side by side, with the ratio column when
// ratio is not nil.
func writeTable(w io.Writer, reports []*Report, names []string, ratio *Ratio) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := append([]string{""}, names...)
	if ratio != nil {
		head = append(head, "ratio")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	row := func(label string, f func(*Report) string, ratio string) {
		cells := []string{label}
		for _, r := range reports {
			cells = append(cells, f(r))
		}
		if ratio != "" {
			cells = append(cells, ratio)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	x := func(get func(*Ratio) float64) string {
		if ratio == nil {
			return ""
		}
		return fmt.Sprintf("%.2fx", get(ratio))
	}
	row("requests", func(r *Report) string { return fmt.Sprint(r.Requests) }, x(func(*Ratio) float64 {
		return div(float64(reports[0].Requests), float64(reports[len(reports)-1].Requests))
	}))
	row("succeeded", func(r *Report) string { return fmt.Sprint(r.Succeeded) }, "")
	row("req/s", func(r *Report) string { return fmt.Sprintf("%.1f", r.Throughput) }, x(func(r *Ratio) float64 { return r.Throughput }))
	row("p50 ms", func(r *Report) string { return fmt.Sprintf("%.3f", r.Latency.P50) }, x(func(r *Ratio) float64 { return r.P50 }))
	row("p90 ms", func(r *Report) string { return fmt.Sprintf("%.3f", r.Latency.P90) }, x(func(r *Ratio) float64 { return r.P90 }))
	row("p99 ms", func(r *Report) string { return fmt.Sprintf("%.3f", r.Latency.P99) }, x(func(r *Ratio) float64 { return r.P99 }))
	row("max ms", func(r *Report) string { return fmt.Sprintf("%.3f", r.Latency.Max) }, x(func(r *Ratio) float64 { return r.Max }))
	if slices.ContainsFunc(reports, func(r *Report) bool { return r.CPU != nil }) {
		cr := ""
		if ratio != nil && ratio.CPU != nil {
			cr = fmt.Sprintf("%.2fx", *ratio.CPU)
		}
		row("cpu ms/req", func(r *Report) string {
			if r.CPU == nil {
				return "-"
			}
			return fmt.Sprintf("%.4f", r.CPU.PerRequest)
		}, cr)
	}
	for i, r := range reports {
		if r.Dropped > 0 {
			fmt.Fprintf(tw, "dropped (%s)\t%d\t\n", names[i], r.Dropped)
		}
		keys := make([]string, 0, len(r.Errors))
		for k := range r.Errors {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(tw, "error %s (%s)\t%d\t\n", k, names[i], r.Errors[k])
		}
	}
	return tw.Flush()
}

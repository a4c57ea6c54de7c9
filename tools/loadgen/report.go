package main

import (
	"fmt"
	"io"
	"maps"
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

// CPU is a process's CPU time over a run, read from /proc/<pid>/stat.
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
	Unsent      int64            `json:"unsent,omitempty"` // open loop: due but never sent
	Throughput  float64          `json:"throughput_rps"`
	Latency     Latency          `json:"latency"`
	Errors      map[string]int64 `json:"errors"`
	Throttled   int64            `json:"throttled"` // answers 429, also counted in Errors
	CPU         *CPU             `json:"server_cpu,omitempty"`
	DBCPU       *CPU             `json:"db_cpu,omitempty"` // the database's processes, with -db-pid
	Memory      *Memory          `json:"server_memory,omitempty"`
	Machine     *Machine         `json:"machine,omitempty"`
	Changed     *int64           `json:"changed,omitempty"` // revoke: licences it changed
	Ops         map[string]*Op   `json:"ops,omitempty"`     // mixed: each operation apart
	Warnings    []string         `json:"warnings,omitempty"`
}

// Op is what a run measured of one operation of a mixed scenario; its
// throughput is over the whole run.
type Op struct {
	Requests   int64   `json:"requests"`
	Succeeded  int64   `json:"succeeded"`
	Throughput float64 `json:"throughput_rps"`
	Latency    Latency `json:"latency"`
}

// Machine is how busy the machine's processors were over a run, in
// cores busy on average. Load from other processes takes processor time
// from the server and the load generator and disturbs the figures.
type Machine struct {
	Cores      float64 `json:"cores_busy"`  // every process
	OtherCores float64 `json:"other_cores"` // all but the server, the database and loadgen
}

// disturbed is how many cores other processes may keep busy, on average,
// before a run's figures are called disturbed.
const disturbed = 0.1

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
		Unsent:      res.unsent,
		Latency:     latencyOf(res.latencies),
		Errors:      res.errors,
	}
	if cfg.rate > 0 {
		r.Mode = "open"
	}
	if r.Errors == nil {
		r.Errors = map[string]int64{}
	}
	for k, n := range r.Errors {
		if strings.HasPrefix(k, "429 ") {
			r.Throttled += n
		}
	}
	if elapsed > 0 {
		r.Throughput = float64(res.requests) / elapsed.Seconds()
	}
	for name, o := range res.ops {
		if r.Ops == nil {
			r.Ops = map[string]*Op{}
		}
		r.Ops[name] = &Op{Requests: o.n, Succeeded: o.ok, Throughput: div(float64(o.n), elapsed.Seconds()), Latency: latencyOf(o.lat)}
	}
	return r
}

// isPublic reports whether scenario calls the public activation routes,
// limited per client address rather than per key.
func isPublic(scenario string) bool { return scenario == "status" || scenario == "activate" }

// warn adds a warning for each way the run fell short of measuring what
// it meant to.
func (r *Report) warn() {
	if r.Throttled > 0 {
		hint := "give more keys (-key a,b,c or -keys-file) or a lower -rate: each key may make 300 requests a minute per route"
		if isPublic(r.Scenario) {
			hint = "send -forwarded to a server started with LICENTIA_TRUSTED_PROXIES=127.0.0.1/32: each client address may make 30 requests a minute per route"
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("throttled: %d of %d answers were 429; %s", r.Throttled, r.Requests, hint))
	}
	if r.Unsent > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("behind: %d requests due were never sent; the rate was not sustained and the percentiles understate", r.Unsent))
	}
	if r.Machine != nil && r.Machine.OtherCores > disturbed {
		r.Warnings = append(r.Warnings, fmt.Sprintf("disturbed: other processes kept %.2f cores busy on average during the run", r.Machine.OtherCores))
	}
	if r.Mode == "open" && r.Unsent == 0 && r.Throughput < 0.95*r.Rate {
		r.Warnings = append(r.Warnings, fmt.Sprintf("behind: %.1f req/s achieved of %.1f asked", r.Throughput, r.Rate))
	}
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
// ratio is not nil, then their errors and warnings.
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
	optional := func(label string, has func(*Report) bool, f func(*Report) string, ratio string) {
		if slices.ContainsFunc(reports, has) {
			row(label, func(r *Report) string {
				if !has(r) {
					return "-"
				}
				return f(r)
			}, ratio)
		}
	}
	row("requests", func(r *Report) string { return fmt.Sprint(r.Requests) }, "")
	row("succeeded", func(r *Report) string { return fmt.Sprint(r.Succeeded) }, "")
	optional("unsent", func(r *Report) bool { return r.Unsent > 0 }, func(r *Report) string { return fmt.Sprint(r.Unsent) }, "")
	row("req/s", func(r *Report) string { return fmt.Sprintf("%.1f", r.Throughput) }, x(func(r *Ratio) float64 { return r.Throughput }))
	row("p50 ms", func(r *Report) string { return fmt.Sprintf("%.3f", r.Latency.P50) }, x(func(r *Ratio) float64 { return r.P50 }))
	row("p90 ms", func(r *Report) string { return fmt.Sprintf("%.3f", r.Latency.P90) }, x(func(r *Ratio) float64 { return r.P90 }))
	row("p99 ms", func(r *Report) string { return fmt.Sprintf("%.3f", r.Latency.P99) }, x(func(r *Ratio) float64 { return r.P99 }))
	row("max ms", func(r *Report) string { return fmt.Sprintf("%.3f", r.Latency.Max) }, x(func(r *Ratio) float64 { return r.Max }))
	cr := ""
	if ratio != nil && ratio.CPU != nil {
		cr = fmt.Sprintf("%.2fx", *ratio.CPU)
	}
	optional("cpu ms/req", func(r *Report) bool { return r.CPU != nil }, func(r *Report) string { return fmt.Sprintf("%.4f", r.CPU.PerRequest) }, cr)
	optional("db cpu ms/req", func(r *Report) bool { return r.DBCPU != nil }, func(r *Report) string { return fmt.Sprintf("%.4f", r.DBCPU.PerRequest) }, "")
	optional("rss MB", func(r *Report) bool { return r.Memory != nil }, func(r *Report) string { return fmt.Sprintf("%.1f", r.Memory.RSSMB) }, "")
	optional("peak rss MB", func(r *Report) bool { return r.Memory != nil }, func(r *Report) string { return fmt.Sprintf("%.1f", r.Memory.PeakMB) }, "")
	optional("other cores", func(r *Report) bool { return r.Machine != nil }, func(r *Report) string { return fmt.Sprintf("%.2f", r.Machine.OtherCores) }, "")
	optional("changed", func(r *Report) bool { return r.Changed != nil }, func(r *Report) string { return fmt.Sprint(*r.Changed) }, "")
	for _, r := range reports {
		for _, name := range slices.Sorted(maps.Keys(r.Ops)) {
			o := r.Ops[name]
			fmt.Fprintf(tw, "%s req/s, p99 ms\t%.1f, %.3f\t\n", name, o.Throughput, o.Latency.P99)
		}
	}
	for i, r := range reports {
		for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
			fmt.Fprintf(tw, "error %s (%s)\t%d\t\n", k, names[i], r.Errors[k])
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, r := range reports {
		for _, msg := range r.Warnings {
			if _, err := fmt.Fprintf(w, "warning (%s): %s\n", names[i], msg); err != nil {
				return err
			}
		}
	}
	return nil
}

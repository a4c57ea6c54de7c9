package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
)

// hookMeasure holds the times and CPU readings of a run.
type hookMeasure struct {
	pid, dbPID  int
	ticks       float64
	start       time.Time
	changesDone time.Time
	cpuBefore   uint64
	dbBefore    uint64
}

func (m *hookMeasure) begin() error {
	if m.pid > 0 {
		var err error
		if m.cpuBefore, err = cpuTicks(strconv.Itoa(m.pid)); err != nil {
			return fmt.Errorf("read server cpu: %w", err)
		}
	}
	if m.dbPID > 0 {
		var err error
		if m.dbBefore, err = treeTicks(m.dbPID); err != nil {
			return fmt.Errorf("read database cpu: %w", err)
		}
	}
	m.start = time.Now()
	return nil
}

// HookLatency is the time from a change to its delivery's first arrival
// at an endpoint, in milliseconds.
type HookLatency struct {
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// hookLatencyOf sorts samples in place and takes nearest-rank
// percentiles.
func hookLatencyOf(samples []time.Duration) HookLatency {
	slices.Sort(samples)
	n := len(samples)
	if n == 0 {
		return HookLatency{}
	}
	at := func(p float64) float64 {
		i := min(max(int(math.Ceil(p/100*float64(n)))-1, 0), n-1)
		return float64(samples[i]) / float64(time.Millisecond)
	}
	return HookLatency{P50: at(50), P90: at(90), P99: at(99), Max: at(100)}
}

// HookCPU is a process's CPU time over a run, read from /proc.
type HookCPU struct {
	PID         int     `json:"pid"`
	Seconds     float64 `json:"seconds"`
	PerDelivery float64 `json:"ms_per_delivery"`
}

// HookReport is what a webhooks run measured.
type HookReport struct {
	Endpoints         int              `json:"endpoints"`
	Changes           int64            `json:"changes"`
	ChangesFailed     int64            `json:"changes_failed"`
	ChangeErrors      map[string]int64 `json:"change_errors,omitempty"`
	ChangesPerSecond  float64          `json:"changes_per_second"`
	Expected          int              `json:"deliveries_expected"`
	Delivered         int              `json:"deliveries_received"`
	Seconds           float64          `json:"seconds"` // first change to last delivery
	DeliveriesPerSec  float64          `json:"deliveries_per_second"`
	Latency           HookLatency      `json:"latency"` // change to first arrival
	Duplicates        int              `json:"duplicates"`
	Missing           int              `json:"missing"`
	Extra             int              `json:"extra_events"`
	Unknown           int              `json:"unknown_events"`
	BadSignatures     int              `json:"bad_signatures"`
	Foreign           int              `json:"foreign_requests"`
	Connections       int              `json:"connections"` // TLS connections the service opened to the receiver
	ServerCPU         *HookCPU         `json:"server_cpu,omitempty"`
	ServerCPUPerEvent float64          `json:"server_cpu_ms_per_change,omitempty"`
	DatabaseCPU       *HookCPU         `json:"database_cpu,omitempty"`
}

func (m *hookMeasure) report(t hookTally, c hookChanges, endpoints int) (*HookReport, error) {
	end := t.Last
	if end.IsZero() {
		end = time.Now()
	}
	r := &HookReport{
		Endpoints: endpoints, Changes: c.ok, ChangesFailed: c.failed, Expected: t.Expected, Delivered: t.Delivered,
		ChangesPerSecond: float64(c.ok) / m.changesDone.Sub(m.start).Seconds(), Seconds: end.Sub(m.start).Seconds(),
		Duplicates: t.Duplicates, Missing: t.Missing, Extra: t.Extra, Unknown: t.Unknown, BadSignatures: t.BadSig, Foreign: t.Foreign,
		Connections: t.Conns,
	}
	if len(c.errors) > 0 {
		r.ChangeErrors = c.errors
	}
	r.DeliveriesPerSec = float64(t.Delivered) / r.Seconds
	r.Latency = hookLatencyOf(t.Latencies)
	if m.pid > 0 {
		after, err := cpuTicks(strconv.Itoa(m.pid))
		if err != nil {
			return nil, fmt.Errorf("read server cpu: %w", err)
		}
		secs := float64(after-m.cpuBefore) / m.ticks
		r.ServerCPU = &HookCPU{PID: m.pid, Seconds: secs, PerDelivery: 1000 * secs / float64(max(t.Delivered, 1))}
		r.ServerCPUPerEvent = 1000 * secs / float64(max(c.ok, 1))
	}
	if m.dbPID > 0 {
		after, err := treeTicks(m.dbPID)
		if err != nil {
			return nil, fmt.Errorf("read database cpu: %w", err)
		}
		secs := float64(after-m.dbBefore) / m.ticks
		r.DatabaseCPU = &HookCPU{PID: m.dbPID, Seconds: secs, PerDelivery: 1000 * secs / float64(max(t.Delivered, 1))}
	}
	return r, nil
}

func (r *HookReport) table(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(label, format string, v any) { fmt.Fprintf(tw, "%s\t"+format+"\t\n", label, v) }
	row("changes", "%d", r.Changes)
	row("changes/s", "%.1f", r.ChangesPerSecond)
	row("endpoints", "%d", r.Endpoints)
	row("deliveries", "%d", r.Delivered)
	row("seconds", "%.2f", r.Seconds)
	row("deliveries/s", "%.1f", r.DeliveriesPerSec)
	row("latency p50 ms", "%.1f", r.Latency.P50)
	row("latency p90 ms", "%.1f", r.Latency.P90)
	row("latency p99 ms", "%.1f", r.Latency.P99)
	row("latency max ms", "%.1f", r.Latency.Max)
	row("connections", "%d", r.Connections)
	row("duplicates", "%d", r.Duplicates)
	row("missing", "%d", r.Missing)
	for _, v := range []struct {
		label string
		n     int
	}{{"changes failed", int(r.ChangesFailed)}, {"extra events", r.Extra}, {"unknown events", r.Unknown},
		{"bad signatures", r.BadSignatures}, {"foreign requests", r.Foreign}} {
		if v.n > 0 {
			row(v.label, "%d", v.n)
		}
	}
	if r.ServerCPU != nil {
		row("server cpu s", "%.2f", r.ServerCPU.Seconds)
		row("server cpu ms/delivery", "%.3f", r.ServerCPU.PerDelivery)
	}
	if r.DatabaseCPU != nil {
		row("database cpu s", "%.2f", r.DatabaseCPU.Seconds)
		row("database cpu ms/delivery", "%.3f", r.DatabaseCPU.PerDelivery)
	}
	return tw.Flush()
}

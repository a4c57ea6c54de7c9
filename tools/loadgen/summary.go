package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// summary prints one line per saved JSON output of loadgen, named after
// its file, for a table of many runs.
func summary(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("summary: give the JSON files of the runs")
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tscenario\tmode\treq/s\tp50 ms\tp99 ms\tcpu ms/req\tdb cpu ms/req\tx req/s\tx p50\tx p99\tx cpu\tceiling x req/s\terrors\t429\trss MB\tpeak MB\tother cores\t")
	var notes []string
	for _, path := range args {
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var out output
		if err := json.Unmarshal(raw, &out); err != nil {
			return fmt.Errorf("summary: %s: %w", path, err)
		}
		if out.Run == nil {
			return fmt.Errorf("summary: %s holds no run", path)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		fmt.Fprintln(tw, summaryLine(name, &out))
		for _, w := range out.Run.Warnings {
			notes = append(notes, name+": "+w)
		}
		for _, other := range []struct {
			name string
			rep  *Report
		}{{"floor", out.Floor}, {"ceiling", out.Ceiling}} {
			if other.rep != nil {
				for _, w := range other.rep.Warnings {
					notes = append(notes, name+" ("+other.name+"): "+w)
				}
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, "warning", n)
	}
	return nil
}

// summaryLine is the tab-separated line of one run.
func summaryLine(name string, out *output) string {
	r := out.Run
	mode := fmt.Sprintf("c%d", r.Concurrency)
	if r.Mode == "open" {
		mode = fmt.Sprintf("%.0f/s", r.Rate)
	}
	var errs int64
	for _, n := range r.Errors {
		errs += n
	}
	cells := []string{
		name, r.Scenario, mode,
		fmt.Sprintf("%.1f", r.Throughput), fmt.Sprintf("%.2f", r.Latency.P50), fmt.Sprintf("%.2f", r.Latency.P99),
		"-", "-", "-", "-", "-", "-", "-",
		fmt.Sprint(errs), fmt.Sprint(r.Throttled), "-", "-", "-",
	}
	if r.CPU != nil {
		cells[6] = fmt.Sprintf("%.3f", r.CPU.PerRequest)
	}
	if r.DBCPU != nil {
		cells[7] = fmt.Sprintf("%.3f", r.DBCPU.PerRequest)
	}
	if x := out.Ratio; x != nil {
		cells[8], cells[9], cells[10] = fmt.Sprintf("%.2f", x.Throughput), fmt.Sprintf("%.2f", x.P50), fmt.Sprintf("%.2f", x.P99)
		if x.CPU != nil {
			cells[11] = fmt.Sprintf("%.2f", *x.CPU)
		}
	}
	if x := out.CeilingRatio; x != nil {
		cells[12] = fmt.Sprintf("%.2f", x.Throughput)
	}
	if r.Memory != nil {
		cells[15], cells[16] = fmt.Sprintf("%.0f", r.Memory.RSSMB), fmt.Sprintf("%.0f", r.Memory.PeakMB)
	}
	// The busiest other load of the run and its floor and ceiling, which
	// were driven right after it.
	other := -1.0
	for _, rep := range []*Report{r, out.Floor, out.Ceiling} {
		if rep != nil && rep.Machine != nil {
			other = max(other, rep.Machine.OtherCores)
		}
	}
	if other >= 0 {
		cells[17] = fmt.Sprintf("%.2f", other)
	}
	return strings.Join(cells, "\t") + "\t"
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for loadgen when startFloor runs
// it again (os.Executable) as the floor server.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == floorCommand {
		if err := serveFloor(context.Background(), os.Args[2:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestParseOptions(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseOptions([]string{"-server", "http://h:1/", "-key", "a,b", "-scenario", "read", "-dataset", "1000000", "-dataset-product", "p", "-rate", "50"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if o.server != "http://h:1" || len(o.keys) != 2 || o.setup.scenario != "read" || o.setup.dataset != 1000000 || o.cfg.rate != 50 || !o.cfg.forwarded {
		t.Errorf("parseOptions() = %+v", o)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no key", []string{}, "API key"},
		{"unknown scenario", []string{"-key", "a", "-scenario", "nap"}, "unknown scenario"},
		{"dataset without product", []string{"-key", "a", "-scenario", "find", "-dataset", "10"}, "-dataset-product"},
		{"floor on admin", []string{"-key", "a", "-scenario", "find", "-floor"}, "-floor"},
		{"ceiling without floor", []string{"-key", "a", "-ceiling"}, "-ceiling needs -floor"},
		{"no machines", []string{"-key", "a", "-machines", "0"}, "-machines"},
		{"stray argument", []string{"-key", "a", "extra"}, "unexpected argument"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseOptions(tt.args, &stderr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parseOptions(%q) error = %v, want it to mention %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, out output) string {
		raw, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cpu := 3.5
	a := write("sqlite-status", output{
		Run:          &Report{Scenario: "status", Mode: "closed", Concurrency: 16, Throughput: 4865.31, Latency: Latency{P50: 1.2, P99: 7.1}, CPU: &CPU{PerRequest: 0.31}, Memory: &Memory{RSSMB: 41, PeakMB: 57}},
		Floor:        &Report{Machine: &Machine{OtherCores: 0.25}, Warnings: []string{"disturbed: other processes kept 0.25 cores busy"}},
		Ratio:        &Ratio{Throughput: 0.28, P50: 3.1, P99: 4.4, CPU: &cpu},
		Ceiling:      &Report{Machine: &Machine{OtherCores: 0.31}, Warnings: []string{"disturbed: other processes kept 0.31 cores busy"}},
		CeilingRatio: &Ratio{Throughput: 2.17},
	})
	b := write("sqlite-find", output{Run: &Report{Scenario: "find", Mode: "open", Rate: 40, Throughput: 39.9, Throttled: 12,
		Errors: map[string]int64{"429 rate_limited": 12}, Warnings: []string{"throttled: 12 of 800 answers were 429"}}})
	var out bytes.Buffer
	if err := summary(t.Context(), []string{a, b}, &out, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("summary printed %d lines, want a head, two runs and three warnings:\n%s", len(lines), out.String())
	}
	if !strings.Contains(lines[0], "ceiling x req/s") {
		t.Errorf("head %q lacks the ceiling's column", lines[0])
	}
	for i, want := range [][]string{
		{"sqlite-status", "c16", "4865.3", "7.10", "0.310", "0.28", "4.40", "3.50", "2.17", "57", "0.31"},
		{"sqlite-find", "40/s", "39.9", "12"},
		{"warning sqlite-status (floor): disturbed"},
		{"warning sqlite-status (ceiling): disturbed"},
		{"warning sqlite-find: throttled"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i+1], w) {
				t.Errorf("line %q lacks %q", lines[i+1], w)
			}
		}
	}
	if err := summary(t.Context(), []string{filepath.Join(dir, "missing.json")}, &out, &out); err == nil {
		t.Error("summary(missing file) error = nil")
	}
}

// TestFloorProcess starts the floor server, and the empty one, as a child
// process, checks its answer, reads its CPU time through /proc and stops
// it.
func TestFloorProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	t.Run("floor", func(t *testing.T) { testFloorProcess(t, "m1") })
	t.Run("empty", func(t *testing.T) { testFloorProcess(t, emptyMachine, emptyArg) })
	if _, err := startFloor(os.Stderr, "full"); err == nil || !strings.Contains(err.Error(), "no address") {
		t.Errorf("startFloor(full) error = %v, want the child to refuse the argument", err)
	}
}

func testFloorProcess(t *testing.T, machine string, args ...string) {
	p, err := startFloor(os.Stderr, args...)
	if err != nil {
		t.Fatal(err)
	}
	if p.cmd.Process.Pid == os.Getpid() {
		t.Fatal("the floor runs in this process")
	}
	c := newClient(p.base, 1)
	status, _, body, err := c.do(t.Context(), request{method: "POST", path: "/v1/activations/status", body: []byte(`{"licence_key":"K","machine_id":"m1"}`)}, true)
	if err != nil || status != 200 {
		t.Fatalf("floor answered %d, %v: %s", status, err, body)
	}
	checkVerdict(t, body, machine)
	if _, err := cpuTicks(p.pid()); err != nil {
		t.Errorf("cpuTicks(floor) error = %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.stop() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stop() = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stop() did not return")
	}
	if !p.cmd.ProcessState.Success() {
		t.Errorf("floor ended with %v, want success", p.cmd.ProcessState)
	}
}

package main

import (
	"os"
	"strconv"
	"testing"
)

func TestParseStat(t *testing.T) {
	line := "1234 (my (odd) cmd) S 77 1234 1234 0 -1 4194560 100 0 0 0 250 75 12 3 20 0 8 0 100 0 0\n"
	got, err := parseStat(line)
	if want := (procStat{ppid: 77, utime: 250, stime: 75, cutime: 12, cstime: 3}); err != nil || got != want {
		t.Errorf("parseStat() = %+v, %v; want %+v, nil", got, err, want)
	}
	for _, bad := range []string{"garbage", "1 (x) S 1 2 3", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 u 75 0 0 20 0 8"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) error = nil", bad)
		}
	}
}

func TestSumTree(t *testing.T) {
	// 10 is the postmaster with two backends, one of which has a child;
	// 20 is an unrelated process.
	stats := map[int]procStat{
		10: {ppid: 1, utime: 1, stime: 2, cutime: 30, cstime: 40},
		11: {ppid: 10, utime: 100},
		12: {ppid: 10, stime: 200},
		13: {ppid: 12, utime: 1000},
		20: {ppid: 1, utime: 5000},
	}
	if got := sumTree(stats, 10); got != 1373 {
		t.Errorf("sumTree(postmaster) = %d, want 1373", got)
	}
	if got := sumTree(stats, 12); got != 1200 {
		t.Errorf("sumTree(12) = %d, want 1200", got)
	}
}

func TestParseStatus(t *testing.T) {
	s := "Name:\tlicentia\nVmPeak:\t 2000 kB\nVmHWM:\t   204800 kB\nVmRSS:\t   102400 kB\nThreads:\t9\n"
	m, err := parseStatus(s)
	if err != nil || m.RSSMB != 100 || m.PeakMB != 200 {
		t.Errorf("parseStatus() = %+v, %v; want rss 100, peak 200", m, err)
	}
	for _, bad := range []string{"Name:\tx\n", "VmHWM:\t1 kB\nVmRSS:\tlots kB\n", "VmHWM:\t1 kB\nVmRSS:\t1 MB\n"} {
		if _, err := parseStatus(bad); err == nil {
			t.Errorf("parseStatus(%q) error = nil", bad)
		}
	}
}

// TestReadProc reads this process's figures from the real /proc.
func TestReadProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	pid := os.Getpid()
	m, err := readMemory(pid)
	if err != nil || m.RSSMB <= 0 || m.PeakMB < m.RSSMB || m.PID != pid {
		t.Errorf("readMemory(self) = %+v, %v", m, err)
	}
	own, err := cpuTicks(strconv.Itoa(pid))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := treeTicks(pid)
	if err != nil || tree < own {
		t.Errorf("treeTicks(self) = %d, %v; want at least the process's own %d", tree, err, own)
	}
	// The process keeps running between readings, so the upper bound is a
	// reading of the whole tree taken afterwards.
	one, err := databaseTicks(pid, "licentia")
	after, afterErr := treeTicks(pid)
	if err != nil || afterErr != nil || one > after || one < own {
		t.Errorf("databaseTicks(self) = %d, %v; want between %d and %d (%v)", one, err, own, after, afterErr)
	}
	if _, err := treeTicks(1 << 30); err == nil {
		t.Error("treeTicks(no such process) error = nil")
	}
}

func TestParseMachineStat(t *testing.T) {
	s := "cpu  100 20 30 5000 40 6 7 8 9 0\ncpu0 50 10 15 2500 20 3 3 4 0 0\n"
	// user, nice, system, irq, softirq, steal; not idle (5000) or iowait (40).
	if got, err := parseMachineStat(s); err != nil || got != 171 {
		t.Errorf("parseMachineStat() = %d, %v; want 171, nil", got, err)
	}
	if _, err := parseMachineStat("intr 1 2 3\n"); err == nil {
		t.Error("parseMachineStat(no cpu line) error = nil")
	}
}

func TestBackendDatabase(t *testing.T) {
	for _, tt := range []struct {
		title, want string
		ok          bool
	}{
		{"postgres: 15/main: postgres licentia_bench 127.0.0.1(49896) idle\x00\x00", "licentia_bench", true},
		{"postgres: app shop [local] SELECT", "shop", true},
		{"postgres: 15/main: postgres wh_v2p 127.0.0.1(49896) idle in transaction", "wh_v2p", true},
		{"postgres: 15/main: checkpointer ", "", false},
		{"postgres: logical replication launcher", "", false},
		{"/usr/lib/postgresql/15/bin/postgres\x00-D\x00/var/lib/postgresql/15/main", "", false},
	} {
		got, ok := backendDatabase(tt.title)
		if got != tt.want || ok != tt.ok {
			t.Errorf("backendDatabase(%q) = %q, %v; want %q, %v", tt.title, got, ok, tt.want, tt.ok)
		}
	}
}

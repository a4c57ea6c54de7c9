package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// clockTicks is the kernel's clock ticks a second (getconf CLK_TCK), or
// 100 when getconf cannot say.
func clockTicks() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || n <= 0 {
		return 100
	}
	return n
}

// procStat is what loadgen reads of /proc/<pid>/stat: the parent and the
// CPU time, in clock ticks, of the process itself and of its children
// that have ended and been waited for.
type procStat struct {
	ppid           int
	utime, stime   uint64
	cutime, cstime uint64
}

// readStat reads /proc/<pid>/stat ("self" for this process).
func readStat(pid string) (procStat, error) {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(raw))
}

// parseStat reads fields 4 (ppid) and 14 to 17 (utime, stime, cutime,
// cstime) of a stat line. The command name (field 2) is in parentheses
// and may hold spaces and parentheses, so fields are counted from the
// last ')'.
func parseStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse stat: no command name")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("parse stat: %d fields", len(f)+2)
	}
	var st procStat
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("parse stat ppid: %w", err)
	}
	st.ppid = ppid
	for j, dst := range []*uint64{&st.utime, &st.stime, &st.cutime, &st.cstime} {
		// cutime and cstime are signed in the kernel's format, though
		// never negative in practice.
		n, err := strconv.ParseInt(f[11+j], 10, 64)
		if err != nil || n < 0 {
			return procStat{}, fmt.Errorf("parse stat field %d: %q", 14+j, f[11+j])
		}
		*dst = uint64(n)
	}
	return st, nil
}

// cpuTicks returns the CPU time of one process, user and system, in
// clock ticks ("self" for this process).
func cpuTicks(pid string) (uint64, error) {
	st, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return st.utime + st.stime, nil
}

// treeTicks returns the CPU time of a process and all its descendants,
// in clock ticks. It is meant for PostgreSQL, whose postmaster forks a
// backend per connection: a live backend counts through its own stat, and
// one that has ended through the cutime and cstime of the parent that
// waited for it, so the difference of two readings holds the work of
// backends that came and went in between.
func treeTicks(root int) (uint64, error) {
	stats, err := allStats()
	if err != nil {
		return 0, err
	}
	if _, ok := stats[root]; !ok {
		return 0, fmt.Errorf("process %d not found", root)
	}
	return sumTree(stats, root), nil
}

// databaseTicks is treeTicks for a PostgreSQL server that other clients
// share: with db not empty, it leaves out the backends serving other
// databases, and the postmaster's time of children it has waited for,
// which cannot be told apart by database. Backends of db that end within
// the run are then missed too; the service's pool keeps its connections.
func databaseTicks(root int, db string) (uint64, error) {
	if db == "" {
		return treeTicks(root)
	}
	stats, err := allStats()
	if err != nil {
		return 0, err
	}
	st, ok := stats[root]
	if !ok {
		return 0, fmt.Errorf("process %d not found", root)
	}
	st.cutime, st.cstime = 0, 0
	stats[root] = st
	for pid, st := range stats {
		if st.ppid != root {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		if name, ok := backendDatabase(string(raw)); ok && name != db {
			delete(stats, pid)
		}
	}
	return sumTree(stats, root), nil
}

// backendDatabase returns the database a PostgreSQL backend serves, read
// from the title it sets as its command line: "postgres: [cluster: ]user
// database host(port) activity", the host being "[local]" for a Unix
// socket. Background processes ("postgres: checkpointer") name none.
func backendDatabase(title string) (string, bool) {
	rest, ok := strings.CutPrefix(title, "postgres: ")
	if !ok {
		return "", false
	}
	f := strings.Fields(strings.ReplaceAll(rest, "\x00", " "))
	for i := 2; i < len(f); i++ {
		host := f[i]
		if host == "[local]" || strings.HasSuffix(host, ")") && strings.Contains(host, "(") {
			return f[i-1], true
		}
	}
	return "", false
}

// allStats reads the stat of every process in /proc. Processes that end
// while it reads are skipped.
func allStats() (map[int]procStat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	stats := make(map[int]procStat, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(e.Name()); err == nil {
			stats[pid] = st
		}
	}
	return stats, nil
}

// sumTree adds up utime, stime, cutime and cstime of root and every
// process descending from it in stats.
func sumTree(stats map[int]procStat, root int) uint64 {
	children := make(map[int][]int)
	for pid, st := range stats {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	var total uint64
	todo := []int{root}
	for len(todo) > 0 {
		pid := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		st := stats[pid]
		total += st.utime + st.stime + st.cutime + st.cstime
		todo = append(todo, children[pid]...)
	}
	return total
}

// Memory is a process's resident memory, read from /proc/<pid>/status.
type Memory struct {
	PID    int     `json:"pid"`
	RSSMB  float64 `json:"rss_mb"`  // VmRSS, now
	PeakMB float64 `json:"peak_mb"` // VmHWM, the most it has held since it started
}

// readMemory reads VmRSS and VmHWM of a process.
func readMemory(pid int) (*Memory, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	m, err := parseStatus(string(raw))
	if err != nil {
		return nil, err
	}
	m.PID = pid
	return m, nil
}

// parseStatus reads VmRSS and VmHWM, given in kB, from a status file.
func parseStatus(s string) (*Memory, error) {
	var m Memory
	found := 0
	for line := range strings.Lines(s) {
		name, rest, ok := strings.Cut(line, ":")
		var dst *float64
		switch {
		case !ok:
			continue
		case name == "VmRSS":
			dst = &m.RSSMB
		case name == "VmHWM":
			dst = &m.PeakMB
		default:
			continue
		}
		num, unit, _ := strings.Cut(strings.TrimSpace(rest), " ")
		kb, err := strconv.ParseUint(num, 10, 64)
		if err != nil || unit != "kB" {
			return nil, fmt.Errorf("parse status %s: %q", name, strings.TrimSpace(rest))
		}
		*dst = float64(kb) / 1024
		found++
	}
	if found != 2 {
		return nil, fmt.Errorf("parse status: VmRSS or VmHWM missing")
	}
	return &m, nil
}

// machineTicks returns the CPU time all processors spent busy, in clock
// ticks, from the first line of /proc/stat.
func machineTicks() (uint64, error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseMachineStat(string(raw))
}

// parseMachineStat adds up the busy fields of the "cpu" line of
// /proc/stat: user, nice, system, irq, softirq and steal. Idle and iowait
// are not busy; guest time is already counted in user.
func parseMachineStat(s string) (uint64, error) {
	line, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("parse /proc/stat: no cpu line")
	}
	var busy uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse /proc/stat: %w", err)
		}
		busy += n
	}
	return busy, nil
}

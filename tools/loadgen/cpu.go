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

// cpuTicks returns utime+stime of a process, in clock ticks, from
// /proc/<pid>/stat ("self" for this process).
func cpuTicks(pid string) (uint64, error) {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStat(string(raw))
}

// parseStat reads utime and stime (fields 14 and 15) of a stat line. The
// command name (field 2) is in parentheses and may hold spaces, so the
// fields are counted from the last ')'.
func parseStat(s string) (uint64, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse stat: no command name")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 13 {
		return 0, fmt.Errorf("parse stat: %d fields", len(f)+2)
	}
	u, err := strconv.ParseUint(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse stat utime: %w", err)
	}
	st, err := strconv.ParseUint(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse stat stime: %w", err)
	}
	return u + st, nil
}

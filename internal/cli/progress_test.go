package cli

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/clock"
)

func TestProgressLine(t *testing.T) {
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	var out bytes.Buffer
	p := &progress{w: &out, clk: clk, label: "verify"}
	p.count("licences checked", 1_000_000)
	p.set(0)
	clk.Set(start.Add(4 * time.Second))
	p.set(400_000)
	clk.Set(start.Add(4*time.Second + 100*time.Millisecond))
	p.set(410_000) // too soon after the last drawing: not drawn
	clk.Set(start.Add(10 * time.Second))
	p.set(1_000_000)
	p.say("done")

	lines := strings.Split(out.String(), "\r\x1b[K")
	want := []string{
		"",
		"verify: 0 of 1,000,000 licences checked",
		"verify: 400,000 of 1,000,000 licences checked, 100,000/s, 6s left",
		"verify: 1,000,000 of 1,000,000 licences checked, 100,000/s\nverify: done\n",
	}
	if len(lines) != len(want) {
		t.Fatalf("progress wrote %q, want the lines %q", out.String(), want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, lines[i], want[i])
		}
	}
}

// Bytes are counted in megabytes, with or without a total.
func TestProgressBytes(t *testing.T) {
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	var out bytes.Buffer
	p := &progress{w: &out, clk: clk, label: "backup"}
	p.count("bytes written", 0)
	clk.Set(start.Add(2 * time.Second))
	p.add(3_000_000)
	p.finish()
	if got, want := out.String(), "\r\x1b[Kbackup: 3.0 MB written, 1.5 MB/s\r\x1b[Kbackup: 3.0 MB written, 1.5 MB/s\n"; got != want {
		t.Errorf("progress wrote %q, want %q", got, want)
	}
	out.Reset()
	p.count("bytes copied", 4_000_000)
	clk.Set(start.Add(3 * time.Second))
	p.set(1_000_000)
	if got, want := out.String(), "\r\x1b[Kbackup: 1.0 of 4.0 MB copied, 1.0 MB/s, 3s left"; got != want {
		t.Errorf("progress wrote %q, want %q", got, want)
	}
}

// Off a terminal (a file, a pipe, a buffer) nothing is written.
func TestProgressOffTerminal(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	for _, w := range []io.Writer{f, &buf} {
		p := newProgress(w, "verify")
		p.say("starting")
		p.count("licences", 10)
		p.set(5)
		p.add(5)
		p.finish()
	}
	if st, _ := f.Stat(); st.Size() != 0 || buf.Len() != 0 {
		t.Errorf("progress off a terminal wrote %d bytes to a file and %q to a buffer, want nothing", st.Size(), buf.String())
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 123456: "123,456",
		1234567: "1,234,567", -1234: "-1,234", -999: "-999"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

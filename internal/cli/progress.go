package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/licentia/licentia/internal/clock"
)

// isTerminal reports whether w is a terminal, where progress is shown.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// progress shows what a long command has done on one line of a terminal:
//
//	verify: 412,000 of 1,000,000 licences checked, 85,310/s, 7s left
//
// rewritten at most five times a second. Off a terminal it shows nothing:
// in a script or a log the command's JSON summary line is the whole answer.
// It is safe for concurrent use.
type progress struct {
	w     io.Writer // nil: nothing is shown
	clk   clock.Clock
	label string // the command, "verify"
	unit  string // what is counted, "licences checked"

	mu          sync.Mutex
	start, last time.Time
	total, done int64
	drawn       bool
}

// newProgress returns the progress of command for stderr; count names
// what it counts.
func newProgress(stderr io.Writer, command string) *progress {
	p := &progress{clk: clock.System{}, label: command}
	if isTerminal(stderr) {
		p.w = stderr
	}
	p.start = p.clk.Now()
	return p
}

// say writes a line of its own, such as the step a command has reached.
func (p *progress) say(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
	fmt.Fprintf(p.w, p.label+": "+format+"\n", args...)
}

// count starts counting unit afresh, towards total when it is known
// (above zero), so that a rate and the time left can be shown.
func (p *progress) count(unit string, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
	p.unit, p.total, p.done = unit, total, 0
	p.start, p.last = p.clk.Now(), time.Time{}
}

// setTotal changes the total being counted towards.
func (p *progress) setTotal(total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
}

// set records that done units are done.
func (p *progress) set(done int64) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = done
	now := p.clk.Now()
	if now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	p.draw(now)
}

// add records n more units done.
func (p *progress) add(n int64) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	done := p.done + n
	p.mu.Unlock()
	p.set(done)
}

// finish draws the last count and ends its line.
func (p *progress) finish() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done > 0 || p.drawn {
		p.draw(p.clk.Now())
	}
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

func (p *progress) draw(now time.Time) {
	fmt.Fprintf(p.w, "\r\x1b[K%s: %s", p.label, p.line(now))
	p.drawn = true
}

// line is the count, its rate and, towards a known total, the time left.
// Bytes are shown in megabytes, "128.6 of 199.5 MB written".
func (p *progress) line(now time.Time) string {
	elapsed := now.Sub(p.start)
	amount, unit := thousands, p.unit
	if rest, ok := strings.CutPrefix(p.unit, "bytes"); ok {
		amount = func(n int64) string { return fmt.Sprintf("%.1f", float64(n)/1e6) }
		unit = "MB" + rest
	}
	s := amount(p.done)
	if p.total > 0 {
		s += " of " + amount(p.total)
	}
	s += " " + unit
	if elapsed < time.Second/10 || p.done == 0 {
		return s
	}
	rate := float64(p.done) / elapsed.Seconds()
	s += ", " + amount(int64(rate))
	if unit != p.unit {
		s += " MB"
	}
	s += "/s"
	if p.total > p.done {
		left := time.Duration(float64(p.total-p.done) / rate * float64(time.Second))
		s += ", " + left.Round(time.Second).String() + " left"
	}
	return s
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/integrity"
	"github.com/licentia/licentia/internal/signing"
)

// verifyCommand checks the integrity of the configured database with the
// configured master key (see integrity.Check) and prints one JSON summary
// line. Any problem makes it exit non-zero.
func verifyCommand(ctx context.Context, args []string, env Env) error {
	fs := newFlags("verify")
	if rest, err := parseFlags(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageError("verify: unexpected argument %q", rest[0])
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	// The key is read, never generated: a missing key is what a restore
	// most needs to hear about.
	m, err := signing.LoadMasterKey(masterKeyPath(cfg))
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	st, err := openStore(ctx, cfg, warnLogger(env.Stderr))
	if err != nil {
		return err
	}
	defer st.Close()
	opts := integrity.Options{}
	if isTerminal(env.Stderr) {
		p := &progress{w: env.Stderr, start: time.Now()}
		opts.Progress = p.licences
		defer p.done()
	}
	report, err := integrity.Check(ctx, st, m, opts)
	if err != nil {
		return err
	}
	printJSON(env.Stdout, report)
	if !report.OK {
		return errReported
	}
	return nil
}

// isTerminal reports whether w is a terminal, where progress is shown.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// progress shows rows done and their rate on one line of a terminal,
// rewritten at most a few times a second.
type progress struct {
	w      io.Writer
	start  time.Time
	last   time.Time
	shown  bool
	latest int64
}

func (p *progress) licences(n int64) {
	p.latest = n
	now := time.Now()
	if now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	p.show(now)
}

func (p *progress) show(now time.Time) {
	rate := float64(p.latest) / max(now.Sub(p.start).Seconds(), 0.001)
	fmt.Fprintf(p.w, "\rverify: %d licences checked, %.0f/s ", p.latest, rate)
}

func (p *progress) done() {
	if p.shown {
		p.show(time.Now())
		fmt.Fprintln(p.w)
	}
}

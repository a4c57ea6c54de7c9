package cli

import (
	"context"

	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/integrity"
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
	m, err := openMasterKey(cfg, "verify")
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, warnLogger(env.Stderr))
	if err != nil {
		return err
	}
	defer st.Close()
	p := newProgress(env.Stderr, "verify")
	report, err := integrity.Check(ctx, st, m, checkOptions(p))
	p.finish()
	if err != nil {
		return err
	}
	printJSON(env.Stdout, report)
	if !report.OK {
		return errReported
	}
	return nil
}

// checkOptions shows integrity.Check's progress through the licences.
func checkOptions(p *progress) integrity.Options {
	return integrity.Options{Progress: func(done, total int64) {
		if done == 0 {
			p.count("licences checked", total)
		}
		p.set(done)
	}}
}

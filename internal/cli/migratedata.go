package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/backup"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/migratedata"
)

// migrateDataCommand moves the service's data from its SQLite database to
// an empty PostgreSQL database (see migratedata.Copy), then runs licentia
// verify's checks on the copy with the configured master key.
func migrateDataCommand(ctx context.Context, args []string, env Env) error {
	fs := newFlags("migrate-data")
	from := fs.String("from", "", "the SQLite database to move: sqlite:PATH")
	to := fs.String("to", "", "the empty PostgreSQL database to move it to: postgres://...")
	if rest, err := parseFlags(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageError("migrate-data: unexpected argument %q", rest[0])
	}
	path, ok := strings.CutPrefix(*from, "sqlite:")
	if !ok || path == "" {
		return usageError("migrate-data: --from sqlite:PATH is required")
	}
	if !strings.HasPrefix(*to, "postgres://") && !strings.HasPrefix(*to, "postgresql://") {
		return usageError("migrate-data: --to postgres://... is required")
	}
	if _, err := url.Parse(*to); err != nil {
		return usageError("migrate-data: --to is not a URL")
	}
	target := redactURL(*to)
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	clk := clock.System{}
	start := clk.Now()
	c, err := backup.Inspect(ctx, path)
	if err != nil {
		return licentia.Errorf(licentia.CodeValidationFailed, "migrate-data: %s", err)
	}
	// The secrets are copied sealed: the key that opens them on SQLite
	// opens them on PostgreSQL, and is checked before anything is written.
	master, err := sealingKey(cfg, c.MasterKeyFingerprint, "migrate-data", "the SQLite database")
	if err != nil {
		return err
	}

	p := newProgress(env.Stderr, "migrate-data")
	p.say("copying %s to %s", path, target)
	p.count("rows copied", 0)
	res, err := migratedata.Copy(ctx, path, *to, migratedata.Options{Progress: func(done, total int64) {
		p.setTotal(total)
		p.set(done)
	}})
	p.finish()
	if err != nil {
		return fmt.Errorf("migrate-data: no data was written to PostgreSQL: %w", err)
	}

	cfg.DatabaseURL = *to
	st, err := openStore(ctx, cfg, warnLogger(env.Stderr))
	if err != nil {
		return fmt.Errorf("migrate-data: the copy is committed but does not open: %w", err)
	}
	defer st.Close()
	p.say("checking the copy (licentia verify)")
	checked, err := checkRestored(ctx, st, master, "migrate-data: the copy in "+target+" is committed", p)
	if err != nil {
		return err
	}
	if n := res.Tables["licences"]; checked.Licences != n {
		return fmt.Errorf("migrate-data: %d licences were copied, the copy holds %d", n, checked.Licences)
	}
	took := clk.Now().Sub(start)
	p.say("done in %s", took.Round(time.Millisecond))
	printJSON(env.Stdout, map[string]any{
		"from": path, "to": target, "master_key_fingerprint": res.MasterKeyFingerprint,
		"tables": res.Tables, "rows": res.Rows, "licences": checked.Licences, "signing_keys_opened": checked.ProductKeys,
		"checked": checked, "took_ms": took.Milliseconds(),
	})
	return nil
}

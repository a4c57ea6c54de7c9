package cli

import (
	"context"
	"crypto/rand"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/licentia/licentia/internal/backup"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/integrity"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/signing"
	"github.com/licentia/licentia/internal/store"
)

func restoreCommand(ctx context.Context, args []string, env Env) error {
	fs := newFlags("restore")
	from := fs.String("from", "", "backup file to restore")
	if rest, err := parseFlags(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageError("restore: unexpected argument %q", rest[0])
	} else if *from == "" {
		return usageError("restore: --from FILE is required")
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	if path, ok := strings.CutPrefix(cfg.DatabaseURL, "sqlite:"); ok {
		return restoreSQLite(ctx, cfg, path, *from, env)
	}
	return restorePostgres(ctx, cfg.DatabaseURL, *from, env)
}

// restoreSQLite puts a backup in place of an empty database, and only
// there: a database holding data is never overwritten, and a backup whose
// secrets the configured master key cannot open is refused before
// anything is written.
func restoreSQLite(ctx context.Context, cfg config.Config, path, from string, env Env) error {
	clk := clock.System{}
	start := clk.Now()
	p := newProgress(env.Stderr, "restore", "bytes")
	c, err := backup.Inspect(ctx, from)
	if err != nil {
		return licentia.Errorf(licentia.CodeValidationFailed, "restore: %s", err)
	}
	if full, err := backup.HoldsData(ctx, path); err != nil || full {
		return licentia.Errorf(licentia.CodeConflict, "restore: the database %s already holds data; restore into an empty data directory", path)
	}
	master, err := sealingKey(cfg, c.MasterKeyFingerprint, "restore", "the backup")
	if err != nil {
		return err
	}
	p.say("copying %s to %s", from, path)
	p.count("bytes copied", 0)
	err = backup.Install(from, path, func(copied, total int64) {
		p.setTotal(total)
		p.set(copied)
	})
	p.finish()
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, warnLogger(env.Stderr))
	if err != nil {
		return fmt.Errorf("restore: %s is in place but does not open: %w", path, err)
	}
	defer st.Close()
	p.say("checking the restored database (licentia verify)")
	checked, err := checkRestored(ctx, st, master, "restore: "+path+" is in place", p)
	if err != nil {
		return err
	}
	if checked.Licences != c.Licences {
		return fmt.Errorf("restore: the backup holds %d licences, the restored database %d", c.Licences, checked.Licences)
	}
	took := clk.Now().Sub(start)
	p.say("done in %s", took.Round(time.Millisecond))
	printJSON(env.Stdout, map[string]any{
		"file": from, "database": path, "master_key_fingerprint": c.MasterKeyFingerprint,
		"products": c.Products, "licences": checked.Licences, "signing_keys_opened": checked.ProductKeys,
		"checked": checked, "took_ms": took.Milliseconds(),
	})
	return nil
}

// sealingKey loads the configured master key, to open the secrets of a
// copy (what: "the backup") sealed under the key with fingerprint: it
// refuses another key, naming both, and no key when the copy has secrets.
// It returns nil when neither the copy nor the configuration has a key.
func sealingKey(cfg config.Config, fingerprint, command, what string) (*signing.MasterKey, error) {
	keyPath := masterKeyPath(cfg)
	master, err := signing.LoadMasterKey(keyPath)
	if err != nil && fingerprint != "" {
		return nil, fmt.Errorf("%s: %s was sealed with master key %s, and the key at %s cannot be read: %w",
			command, what, fingerprint, keyPath, err)
	}
	if master != nil && fingerprint != "" && master.Fingerprint() != fingerprint {
		return nil, licentia.Errorf(licentia.CodeConflict, "%s: %s was sealed with master key %s, but %s has fingerprint %s: configure the key %s was sealed with",
			command, what, fingerprint, keyPath, master.Fingerprint(), what)
	}
	return master, nil
}

// checkRestored runs licentia verify's checks on a restored or moved
// database: every sealed secret opens under the master key, every record's
// parent exists, every licence counter equals a recount. Every problem is
// listed after done, which says what was written.
func checkRestored(ctx context.Context, st store.Store, master *signing.MasterKey, done string, p *progress) (*integrity.Checked, error) {
	if master == nil {
		// A backup with no sealed secrets, restored without a master key:
		// there is nothing to open; the rest is checked with a throwaway key.
		raw := make([]byte, signing.MasterKeySize)
		rand.Read(raw)
		var err error
		if master, err = signing.NewMasterKey(raw); err != nil {
			return nil, err
		}
	}
	report, err := integrity.Check(ctx, st, master, checkOptions(p))
	p.finish()
	if err != nil {
		return nil, err
	}
	if !report.OK {
		problems := make([]string, len(report.Problems))
		for i, pr := range report.Problems {
			problems[i] = fmt.Sprintf("%s %s %s: %s", pr.Check, pr.Kind, pr.ID, pr.Message)
		}
		return nil, &licentia.Error{Code: licentia.CodeInternal, Details: map[string]any{"problems": report.Problems},
			Message: fmt.Sprintf("%s, but %d checks failed: %s", done, len(problems), strings.Join(problems, "; "))}
	}
	return &report.Checked, nil
}

// restorePostgres leaves the copy to pg_restore: it prints the command,
// and runs it when pg_restore is installed and the database holds no
// tables.
func restorePostgres(ctx context.Context, rawURL, from string, env Env) error {
	c, err := newPGCommand(rawURL, "pg_restore", "--exit-on-error", "--no-owner")
	if err != nil {
		return err
	}
	c.args = append(c.args, from)
	out := map[string]any{"engine": "postgres", "command": c.String(), "ran": false}
	if c.passwordNote != "" {
		out["password"] = c.passwordNote
	}
	if _, err := exec.LookPath("pg_restore"); err != nil {
		out["note"] = "pg_restore is not installed here: run the command into an empty database, then licentia migrate"
		printJSON(env.Stdout, out)
		return nil
	}
	tables, err := postgresTables(ctx, rawURL)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if tables > 0 {
		return licentia.Errorf(licentia.CodeConflict, "restore: the database already holds %d tables; restore into an empty database", tables)
	}
	clk := clock.System{}
	start := clk.Now()
	newProgress(env.Stderr, "restore", "").say("running pg_restore")
	if err := c.run(ctx, env.Stderr); err != nil {
		return err
	}
	out["ran"], out["file"], out["took_ms"] = true, from, clk.Now().Sub(start).Milliseconds()
	printJSON(env.Stdout, out)
	return nil
}

func postgresTables(ctx context.Context, rawURL string) (int64, error) {
	conn, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int64
	err = conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = current_schema()`).Scan(&n)
	return n, err
}

package cli

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os/exec"
	"slices"
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
	return restorePostgres(ctx, cfg, *from, env)
}

// restoreSQLite puts a backup in place of an empty database, and only
// there: a database holding data is never overwritten, and a backup whose
// secrets the configured master key cannot open is refused before
// anything is written.
func restoreSQLite(ctx context.Context, cfg config.Config, path, from string, env Env) error {
	clk := clock.System{}
	start := clk.Now()
	p := newProgress(env.Stderr, "restore")
	if err := checkNamedFile("restore", "--from", from); err != nil {
		return err
	}
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
		return nil, masterKeyError(cfg, command, fmt.Sprintf("%s was sealed with master key %s", what, fingerprint), err)
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

// restorePostgres loads a pg_dump archive into a database holding no data,
// with the guarantees of restoreSQLite: the archive is read first, without
// restoring it, and refused when the configured master key cannot open
// what it seals; pg_restore then loads it in one transaction, and the
// restored database is checked as licentia verify would. Without
// pg_restore installed, the command is printed.
func restorePostgres(ctx context.Context, cfg config.Config, from string, env Env) error {
	rawURL := cfg.DatabaseURL
	flags := []string{"--single-transaction", "--no-owner", "--no-privileges"}
	if _, err := exec.LookPath("pg_restore"); err != nil {
		// Run by hand, without the checks below, the command must fail on
		// a database holding tables rather than replace them: no --clean.
		c, err := newPGCommand(rawURL, "pg_restore", flags...)
		if err != nil {
			return err
		}
		c.args = append(c.args, from)
		out := map[string]any{"engine": "postgres", "command": c.String(), "ran": false,
			"note": "pg_restore is not installed here: run the command into a database without tables, then licentia verify"}
		if c.passwordNote != "" {
			out["password"] = c.passwordNote
		}
		printJSON(env.Stdout, out)
		return nil
	}
	// Checked to hold no data, the target's empty tables (a database only
	// migrated) are dropped and created again by the archive.
	c, err := newPGCommand(rawURL, "pg_restore", append(flags, "--clean", "--if-exists")...)
	if err != nil {
		return err
	}
	c.args = append(c.args, from)
	clk := clock.System{}
	start := clk.Now()
	p := newProgress(env.Stderr, "restore")
	if err := checkNamedFile("restore", "--from", from); err != nil {
		return err
	}
	p.say("reading %s", from)
	d, err := backup.InspectDump(ctx, from)
	if err != nil {
		return licentia.Errorf(licentia.CodeValidationFailed, "restore: %s", err)
	}
	database := redactURL(rawURL)
	schema, err := targetSchema(ctx, rawURL)
	if err != nil {
		return fmt.Errorf("restore: database %s: %w", database, err)
	}
	if schema != d.Schema {
		return licentia.Errorf(licentia.CodeValidationFailed,
			"restore: %s was dumped from schema %s, which pg_restore recreates, but the service would read schema %s: set search_path=%s in LICENTIA_DATABASE_URL",
			from, d.Schema, schema, d.Schema)
	}
	target, err := backup.InspectTarget(ctx, rawURL, schema)
	if err != nil {
		return fmt.Errorf("restore: database %s: %w", database, err)
	}
	if len(target.Full) > 0 {
		return licentia.Errorf(licentia.CodeConflict, "restore: schema %s of the database %s already holds data (%s); restore into a database holding none",
			schema, database, strings.Join(target.Full, ", "))
	}
	// pg_restore --clean replaces the empty tables the archive creates
	// again; any other would outlive the restore and stop the migrations
	// that follow it.
	var stray []string
	for _, t := range target.Tables {
		if !slices.Contains(d.Tables, t) {
			stray = append(stray, t)
		}
	}
	if len(stray) > 0 {
		return licentia.Errorf(licentia.CodeConflict, "restore: schema %s of the database %s holds tables the backup does not (%s), left by a newer version's migrations; restore into a new database",
			schema, database, strings.Join(stray, ", "))
	}
	master, err := sealingKey(cfg, d.MasterKeyFingerprint, "restore", "the backup")
	if err != nil {
		return err
	}
	p.say("running pg_restore into %s", database)
	if err := c.run(ctx, env.Stderr); err != nil {
		return fmt.Errorf("restore: nothing was restored: %w", err)
	}
	st, err := openStore(ctx, cfg, warnLogger(env.Stderr))
	if err != nil {
		return fmt.Errorf("restore: %s is restored but does not open: %w", database, err)
	}
	defer st.Close()
	p.say("checking the restored database (licentia verify)")
	checked, err := checkRestored(ctx, st, master, "restore: "+database+" is restored", p)
	if err != nil {
		return err
	}
	if checked.Licences != d.Licences {
		return fmt.Errorf("restore: the backup holds %d licences, the restored database %d", d.Licences, checked.Licences)
	}
	took := clk.Now().Sub(start)
	p.say("done in %s", took.Round(time.Millisecond))
	printJSON(env.Stdout, map[string]any{
		"engine": "postgres", "command": c.String(), "file": from, "database": database, "schema": schema,
		"master_key_fingerprint": d.MasterKeyFingerprint, "products": d.Products, "licences": checked.Licences,
		"signing_keys_opened": checked.ProductKeys, "checked": checked, "took_ms": took.Milliseconds(),
	})
	return nil
}

// targetSchema is the schema the service reads at rawURL: the first of
// the URL's search_path, or the server's current schema.
func targetSchema(ctx context.Context, rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	if sp := u.Query().Get("search_path"); sp != "" {
		first, _, _ := strings.Cut(sp, ",")
		return strings.Trim(strings.TrimSpace(first), `"`), nil
	}
	conn, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var schema *string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return "", err
	}
	if schema == nil {
		return "public", nil
	}
	return *schema, nil
}

// redactURL is rawURL without its password, for output.
func redactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "the configured database"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

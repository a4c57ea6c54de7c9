package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/licentia/licentia/internal/backup"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/config"
	"github.com/licentia/licentia/internal/licentia"
)

func backupCommand(ctx context.Context, args []string, env Env) error {
	fs := newFlags("backup")
	to := fs.String("to", "", "file to write the backup to")
	if rest, err := parseFlags(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageError("backup: unexpected argument %q", rest[0])
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	if path, ok := strings.CutPrefix(cfg.DatabaseURL, "sqlite:"); ok {
		if *to == "" {
			return usageError("backup: --to FILE is required")
		}
		return backupSQLite(ctx, path, *to, env)
	}
	return backupPostgres(ctx, cfg.DatabaseURL, *to, env)
}

// backupSQLite snapshots the database while serve may be writing to it.
// The master key stays out of the backup; its fingerprint is in the
// settings the snapshot holds, and is reported so the operator can file
// the backup with the right key.
func backupSQLite(ctx context.Context, path, to string, env Env) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return &licentia.Error{Code: licentia.CodeDatabaseNotFound, Err: err, Message: fmt.Sprintf(
			"backup: there is no database at %s: run backup with the configuration serve runs with (LICENTIA_DATA_DIR, LICENTIA_DATABASE_URL)", path)}
	}
	if err := checkDirectory("backup", "--to", to); err != nil {
		return err
	}
	clk := clock.System{}
	start := clk.Now()
	p := newProgress(env.Stderr, "backup")
	p.say("copying %s", path)
	p.count("bytes written", 0)
	size, err := backup.Snapshot(ctx, path, to, func(written, total int64) {
		p.setTotal(total)
		p.set(written)
	})
	p.finish()
	if err != nil {
		return err
	}
	c, err := backup.Inspect(ctx, to)
	if err != nil {
		return err
	}
	took := clk.Now().Sub(start)
	p.say("%s bytes in %s", thousands(size), took.Round(time.Millisecond))
	printJSON(env.Stdout, map[string]any{
		"file": to, "bytes": size, "master_key_fingerprint": c.MasterKeyFingerprint,
		"licences": c.Licences, "products": c.Products, "took_ms": took.Milliseconds(),
	})
	return nil
}

// pgCommand is a PostgreSQL client command for the database at rawURL:
// its arguments, with no password in them, and the environment that
// carries the password to the client when it is run here.
type pgCommand struct {
	args     []string
	password string
	// passwordNote says where the password goes; "" when the URL holds none.
	passwordNote string
	sslmode      string
}

func newPGCommand(rawURL, program string, flags ...string) (*pgCommand, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	c := &pgCommand{args: []string{program}}
	c.args = append(c.args, flags...)
	if h := u.Hostname(); h != "" {
		c.args = append(c.args, "--host="+h)
	}
	if p := u.Port(); p != "" {
		c.args = append(c.args, "--port="+p)
	}
	if u.User != nil && u.User.Username() != "" {
		c.args = append(c.args, "--username="+u.User.Username())
	}
	if pw, ok := u.User.Password(); ok {
		c.password = pw
		c.passwordNote = "the password of LICENTIA_DATABASE_URL goes in PGPASSWORD or ~/.pgpass, never on the command line"
	}
	c.sslmode = u.Query().Get("sslmode")
	// A database kept in a schema of its own (search_path in the URL) is
	// dumped alone.
	if sp := u.Query().Get("search_path"); sp != "" && program == "pg_dump" {
		c.args = append(c.args, "--schema="+strings.TrimSpace(strings.Split(sp, ",")[0]))
	}
	c.args = append(c.args, "--dbname="+strings.TrimPrefix(u.Path, "/"))
	return c, nil
}

// String is the command as an operator types it, the password left out.
func (c *pgCommand) String() string {
	var b strings.Builder
	if c.sslmode != "" {
		b.WriteString("PGSSLMODE=" + shellQuote(c.sslmode) + " ")
	}
	for i, a := range c.args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

func (c *pgCommand) run(ctx context.Context, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, c.args[0], c.args[1:]...)
	cmd.Env = os.Environ()
	if c.password != "" {
		cmd.Env = append(cmd.Env, "PGPASSWORD="+c.password)
	}
	if c.sslmode != "" {
		cmd.Env = append(cmd.Env, "PGSSLMODE="+c.sslmode)
	}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", c.args[0], err)
	}
	return nil
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=./:@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// backupPostgres leaves the copy to pg_dump, whose custom format
// pg_restore reads: it prints the command, and runs it when pg_dump is
// installed and a file is named.
func backupPostgres(ctx context.Context, rawURL, to string, env Env) error {
	file := to
	if file == "" {
		file = "licentia.dump"
	}
	c, err := newPGCommand(rawURL, "pg_dump", "--format=custom", "--file="+file)
	if err != nil {
		return err
	}
	out := map[string]any{"engine": "postgres", "command": c.String(), "ran": false}
	if c.passwordNote != "" {
		out["password"] = c.passwordNote
	}
	if _, err := exec.LookPath("pg_dump"); to == "" || err != nil {
		out["note"] = "run the command to back up the database; licentia backup --to FILE runs it when pg_dump is installed"
		printJSON(env.Stdout, out)
		return nil
	}
	if err := checkDirectory("backup", "--to", to); err != nil {
		return err
	}
	clk := clock.System{}
	start := clk.Now()
	newProgress(env.Stderr, "backup").say("running pg_dump")
	if err := c.run(ctx, env.Stderr); err != nil {
		return err
	}
	st, err := os.Stat(to)
	if err != nil {
		return errors.Join(errors.New("backup: pg_dump wrote no file"), err)
	}
	if err := os.Chmod(to, 0o600); err != nil {
		return err
	}
	out["ran"], out["file"], out["bytes"], out["took_ms"] = true, to, st.Size(), clk.Now().Sub(start).Milliseconds()
	printJSON(env.Stdout, out)
	return nil
}

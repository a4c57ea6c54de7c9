// Package cli is the licentia command line and the one place that wires the
// service together: configuration, storage engine, operations and HTTP.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/licentia/licentia/internal/licentia"
)

// Env is the command's environment: its output streams and how it reads
// variables, so tests run commands in-process.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

const usage = `usage: licentia <command> [flags]

commands:
  serve                                  run the HTTP service
  migrate                                apply database migrations and exit
  version                                print the build information as JSON
  healthcheck [--path /readyz|/healthz]  exit 0 when the local service answers 200 (container health checks)
  org create --name N --slug S --plan P --owner-email E
  member login-link --org SLUG --email E   a one-time link that sets a member's console password
  assistant token --org SLUG --email E     an access token for an AI assistant acting as a member
  apikey create --org SLUG --scopes CSV [--name N] [--expires-at T]
  apikey list --org SLUG
  apikey revoke --org SLUG ID
  integration connect --org SLUG --provider P --name N --api-key-file F [--webhook-secret-file F]
  integration list --org SLUG
  integration set-webhook-secret --org SLUG --webhook-secret-file F ID
  integration disconnect --org SLUG ID
  masterkey rotate --new-key-file F      re-encrypt every secret under a new master key
  backup --to FILE                       a consistent copy of the database while serve runs
  restore --from FILE                    put a backup in place of an empty database, then check it
  verify                                 check the database's integrity with the master key
  migrate-data --from sqlite:PATH --to postgres://...
                                         move every row to an empty PostgreSQL database, then check it

configuration: LICENTIA_* environment variables (see README.md)
`

// Run runs the command in args and returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunEnv(ctx, args, Env{Stdout: stdout, Stderr: stderr, Getenv: os.Getenv})
}

// RunEnv is Run with an explicit environment.
func RunEnv(ctx context.Context, args []string, env Env) int {
	err := run(ctx, args, env)
	if err == nil {
		return 0
	}
	if errors.Is(err, errReported) {
		return 1
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(env.Stderr, usage)
		return 2
	}
	printError(env.Stderr, err)
	return 1
}

func run(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		return usageError("a command is required")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		return serveCommand(ctx, rest, env)
	case "migrate":
		return migrateCommand(ctx, rest, env)
	case "version":
		return versionCommand(rest, env)
	case "healthcheck":
		return healthcheckCommand(ctx, rest, env)
	case "org":
		return orgCommand(ctx, rest, env)
	case "member":
		return memberCommand(ctx, rest, env)
	case "assistant":
		return assistantCommand(ctx, rest, env)
	case "apikey":
		return apikeyCommand(ctx, rest, env)
	case "integration":
		return integrationCommand(ctx, rest, env)
	case "masterkey":
		return masterkeyCommand(ctx, rest, env)
	case "backup":
		return backupCommand(ctx, rest, env)
	case "restore":
		return restoreCommand(ctx, rest, env)
	case "verify":
		return verifyCommand(ctx, rest, env)
	case "migrate-data":
		return migrateDataCommand(ctx, rest, env)
	case "help", "-h", "--help":
		return flag.ErrHelp
	default:
		return usageError("unknown command %q", cmd)
	}
}

// errReported ends a command that has printed its outcome and must exit
// non-zero: RunEnv prints nothing more.
var errReported = errors.New("failure reported")

// usageError is a command-line mistake, reported as validation_failed.
func usageError(format string, args ...any) error {
	return licentia.Errorf(licentia.CodeValidationFailed, format+" (licentia help lists the commands)", args...)
}

// printError writes one JSON error object on stderr.
func printError(w io.Writer, err error) {
	obj := map[string]any{"code": licentia.CodeInternal, "message": err.Error()}
	if e, ok := errors.AsType[*licentia.Error](err); ok {
		obj["code"], obj["message"] = e.Code, e.Message
		if len(e.Details) > 0 {
			obj["details"] = e.Details
		}
		if e.Code == licentia.CodeInternal && e.Err != nil {
			obj["message"] = e.Err.Error()
		}
	}
	printJSON(w, map[string]any{"error": obj})
}

func printJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "%s\n", b)
}

// newFlags returns a flag set that reports its errors through RunEnv.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses args, allowing flags after positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageError("%s: %s", fs.Name(), strings.TrimSpace(err.Error()))
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

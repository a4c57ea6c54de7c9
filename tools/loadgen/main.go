// Command loadgen drives a running Licentia service with one scenario,
// closed-loop at a fixed concurrency or open-loop at a fixed rate, and
// reports throughput, latency, errors by code and, with -pid, the
// server's CPU time per request and resident memory. With -floor it then
// drives a floor server, a child process that does only the unavoidable
// work of a status check (decode the body, one Ed25519 verification, one
// signature), under the same load, and prints each figure as a ratio to
// it. With -ceiling too it then drives an empty server the same way, one
// that reads the body and answers an answer made once: what the load
// generator, the loopback and net/http leave to any server on the machine.
//
//	go run ./tools/loadgen -server http://127.0.0.1:8080 -key KEY -scenario status -concurrency 8 -duration 30s
//
// Scenarios: status (status checks spread over -machines activated
// machines), renew (renewals of a lease held by each of those machines),
// activate (a new machine each request), find, find-q and
// find-ref (find by email, by search prefix, by external reference),
// read, issue, revoke, counts, counts-product (the counts of the
// scenario's product), and mixed: issues, activations, revokes,
// reinstatements and deactivations at once in one organization, each
// reported apart too. With -dataset N the administration scenarios work on
// the N licences of the data loader instead of issuing their own.
//
// The keys need products:write, licences:write and licences:read. The
// public routes allow 30 requests a minute per client address: run the
// server with LICENTIA_TRUSTED_PROXIES=127.0.0.1/32 so that each request,
// sent with its own X-Forwarded-For address, counts apart. The
// administration routes allow 300 a minute per key and route: give
// several keys (-key a,b,c or -keys-file) and loadgen takes them in turn.
//
//	loadgen summary run1.json run2.json ...
//
// prints one line per saved JSON output, for comparing runs.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// commands are loadgen's subcommands, named by its first argument; with
// none, loadgen drives a scenario.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"summary":    summary,
	"webhooks":   runWebhooks,
	floorCommand: serveFloor, // not listed in the usage: only loadgen starts it
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd, args := runCommand, os.Args[1:]
	if len(args) > 0 && commands[args[0]] != nil {
		cmd, args = commands[args[0]], args[1:]
	}
	err := cmd(ctx, args, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		stop()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		stop()
		os.Exit(1)
	}
}

// output is the JSON written to stdout.
type output struct {
	Run   *Report `json:"run"`
	Floor *Report `json:"floor,omitempty"`
	Ratio *Ratio  `json:"ratio,omitempty"`
	// Ceiling is the empty server's run (-ceiling), and CeilingRatio its
	// figures divided by the floor's: the most any server could reach.
	Ceiling      *Report `json:"ceiling,omitempty"`
	CeilingRatio *Ratio  `json:"ceiling_ratio,omitempty"`
}

// runCommand sets up the scenario, drives it and prints the reports: a
// table on stderr and the JSON output on stdout.
func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	keys := newKeyRing(o.keys)
	c := newClient(o.server, o.cfg.concurrency)
	fmt.Fprintf(stderr, "setting up %s on %s with %d keys\n", o.scenario, o.server, keys.size())
	fx, err := setup(ctx, c, keys, o.setup)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	sc, err := scenarioOf(o.scenario, fx, keys)
	if err != nil {
		return err
	}
	if budget := float64(keys.size()) * 300 / 60; !isPublic(o.scenario) && o.cfg.rate > budget {
		fmt.Fprintf(stderr, "-rate %.1f is over the %d keys' budget of %.1f a second on one route: expect 429s\n", o.cfg.rate, keys.size(), budget)
	}
	fmt.Fprintf(stderr, "driving %s for %s\n", o.scenario, o.cfg.duration)
	real, err := measure(ctx, c, sc, o.cfg, o.scenario, o.pid, database{o.dbPID, o.dbName})
	if err != nil {
		return err
	}
	if o.scenario == "revoke" {
		n := fx.changed.Load()
		real.Changed = &n
		if real.Requests > int64(len(fx.ids)) {
			real.Warnings = append(real.Warnings, fmt.Sprintf("revoke: %d requests for %d licences, so some revoked a licence again (changed:false)", real.Requests, len(fx.ids)))
		}
	}
	out := output{Run: real}
	names, reports := []string{o.scenario}, []*Report{real}
	if o.floor {
		fl, err := runFloor(ctx, sc, o.cfg, stderr)
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		r := ratioOf(real, fl)
		out.Floor, out.Ratio = fl, &r
		names, reports = append(names, "floor"), append(reports, fl)
		if o.ceiling {
			ceil, err := runFloor(ctx, sc, o.cfg, stderr, emptyArg)
			if err != nil {
				return fmt.Errorf("ceiling: %w", err)
			}
			cr := ratioOf(ceil, fl)
			out.Ceiling, out.CeilingRatio = ceil, &cr
			names, reports = append(names, "ceiling"), append(reports, ceil)
		}
	}
	if err := writeTable(stderr, reports, names, out.Ratio); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// measure drives scenario and reports it with, for a process id above 0,
// the server's CPU time and memory, the database's CPU time, and how busy
// the rest of the machine was.
func measure(ctx context.Context, c *client, scenario scenarioFunc, cfg runConfig, name string, pid int, db database) (*Report, error) {
	before, err := readCounters(pid, db)
	if err != nil {
		return nil, err
	}
	res, elapsed := drive(ctx, c, scenario, cfg)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := newReport(c.base, name, cfg, res, elapsed)
	if pid <= 0 {
		r.warn()
		return r, nil
	}
	after, err := readCounters(pid, db)
	if err != nil {
		return nil, err
	}
	if r.Memory, err = readMemory(pid); err != nil {
		return nil, fmt.Errorf("read server memory: %w", err)
	}
	ticks := clockTicks()
	r.CPU = cpuOf(pid, after.server-before.server, ticks, r.Requests)
	if db.pid > 0 {
		r.DBCPU = cpuOf(db.pid, after.db-before.db, ticks, r.Requests)
	}
	busy := float64(after.machine-before.machine) / ticks
	ours := float64(after.server-before.server+after.db-before.db+after.self-before.self) / ticks
	r.Machine = &Machine{Cores: div(busy, r.Seconds), OtherCores: div(max(busy-ours, 0), r.Seconds)}
	r.warn()
	return r, nil
}

// database names the database server's processes: the postmaster's pid
// (0 for none) and, when it serves others too, the database's name.
type database struct {
	pid  int
	name string
}

// counters are the CPU times a run reads before and after, in clock ticks.
type counters struct {
	server, db, self, machine uint64
}

// readCounters reads the CPU time of the server, of the database when
// db.pid is above 0, of this process and of the whole machine; with no
// server pid it reads nothing.
func readCounters(pid int, db database) (counters, error) {
	var c counters
	if pid <= 0 {
		return c, nil
	}
	var err error
	if c.server, err = cpuTicks(strconv.Itoa(pid)); err != nil {
		return c, fmt.Errorf("read server cpu: %w", err)
	}
	if db.pid > 0 {
		if c.db, err = databaseTicks(db.pid, db.name); err != nil {
			return c, fmt.Errorf("read database cpu: %w", err)
		}
	}
	if c.self, err = cpuTicks("self"); err != nil {
		return c, fmt.Errorf("read own cpu: %w", err)
	}
	if c.machine, err = machineTicks(); err != nil {
		return c, fmt.Errorf("read machine cpu: %w", err)
	}
	return c, nil
}

func cpuOf(pid int, used uint64, ticks float64, requests int64) *CPU {
	secs := float64(used) / ticks
	return &CPU{PID: pid, Seconds: secs, PerRequest: 1000 * div(secs, float64(requests))}
}

// runFloor starts the floor server, or with emptyArg the empty one, and
// drives it with the requests and the load of the real run, measured the
// same way.
func runFloor(ctx context.Context, scenario scenarioFunc, cfg runConfig, stderr io.Writer, args ...string) (*Report, error) {
	p, err := startFloor(stderr, args...)
	if err != nil {
		return nil, err
	}
	name := "floor"
	if len(args) > 0 {
		name = "ceiling"
	}
	fmt.Fprintf(stderr, "driving the %s (pid %d) for %s\n", name, p.cmd.Process.Pid, cfg.duration)
	r, err := measure(ctx, newClient(p.base, cfg.concurrency), scenario, cfg, name, p.cmd.Process.Pid, database{})
	return r, errors.Join(err, p.stop())
}

// options are drive's flags.
type options struct {
	server     string
	keys       []string
	scenario   string
	cfg        runConfig
	pid, dbPID int
	dbName     string
	floor      bool
	ceiling    bool
	setup      setupConfig
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: loadgen [flags]\n       loadgen summary RUN.json...\n\nflags:\n")
		fs.PrintDefaults()
	}
	var o options
	fs.StringVar(&o.server, "server", "http://127.0.0.1:8080", "base URL of the service")
	key := fs.String("key", "", "administration API keys, comma-separated (products:write, licences:write, licences:read)")
	keysFile := fs.String("keys-file", "", "file of administration API keys, one a line")
	fs.StringVar(&o.scenario, "scenario", "status", strings.Join(scenarios, ", "))
	fs.IntVar(&o.cfg.concurrency, "concurrency", 8, "workers, each with one request in flight; open loop: requests due while all are busy wait, and the wait counts in their latency")
	fs.Float64Var(&o.cfg.rate, "rate", 0, "requests a second, open loop; 0 runs closed loop")
	fs.DurationVar(&o.cfg.duration, "duration", 30*time.Second, "how long to drive the load")
	fs.BoolVar(&o.cfg.forwarded, "forwarded", true, "send a distinct X-Forwarded-For per public request")
	fs.IntVar(&o.pid, "pid", 0, "server process id, to read its CPU time and memory from /proc")
	fs.IntVar(&o.dbPID, "db-pid", 0, "database server process id (the PostgreSQL postmaster), to read the CPU time of it and its children")
	fs.StringVar(&o.dbName, "db-name", "", "with -db-pid: count only the backends of this database, for a PostgreSQL other clients share")
	fs.BoolVar(&o.floor, "floor", false, "then drive a floor server under the same load and print ratios (status, activate)")
	fs.BoolVar(&o.ceiling, "ceiling", false, "with -floor: then drive an empty server (it reads the body and answers a floor answer made once) under the same load, the most any server reaches")
	fs.IntVar(&o.setup.licences, "licences", 100, "licences to issue: status spreads its machines over them, activate takes turns on them, find and read use them, mixed activates on half and revokes and reinstates the others")
	fs.IntVar(&o.setup.machines, "machines", 1000, "machines to activate for status and renew")
	fs.IntVar(&o.setup.dataset, "dataset", 0, "licences of a loaded data set to use instead of issuing (find, find-q, find-ref, read, issue, revoke, counts, counts-product)")
	fs.StringVar(&o.setup.datasetProduct, "dataset-product", "", "product id of the loaded data set")
	fs.IntVar(&o.setup.sample, "sample", 2000, "with -dataset: licence ids to learn at setup for read and revoke")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	o.server = strings.TrimRight(o.server, "/")
	o.setup.scenario = o.scenario
	keys, err := parseKeys(*key, *keysFile)
	if err != nil {
		return o, err
	}
	o.keys = keys
	return o, o.check()
}

func (o *options) check() error {
	switch {
	case !slices.Contains(scenarios, o.scenario):
		return fmt.Errorf("unknown scenario %q: want one of %s", o.scenario, strings.Join(scenarios, ", "))
	case o.cfg.concurrency < 1:
		return fmt.Errorf("-concurrency must be at least 1")
	case o.cfg.duration <= 0:
		return fmt.Errorf("-duration must be positive")
	case o.cfg.rate < 0:
		return fmt.Errorf("-rate must not be negative")
	case o.setup.licences < 1 || o.setup.machines < 1 || o.setup.sample < 1:
		return fmt.Errorf("-licences, -machines and -sample must be at least 1")
	case o.setup.dataset < 0:
		return fmt.Errorf("-dataset must not be negative")
	case o.setup.dataset > 0 && o.setup.datasetProduct == "":
		return fmt.Errorf("-dataset needs -dataset-product")
	case o.floor && !isPublic(o.scenario):
		return fmt.Errorf("-floor compares status checks or activations; %s is neither", o.scenario)
	case o.ceiling && !o.floor:
		return fmt.Errorf("-ceiling needs -floor: the ceiling is a ratio to the floor")
	}
	return nil
}

// Command loadgen drives a running Licentia service with one scenario,
// closed-loop at a fixed concurrency or open-loop at a fixed rate, and
// reports throughput, latency, errors and (with -pid) the server's CPU
// time per request. With -floor it then drives an in-process handler that
// does only the unavoidable work of a status check (decode, one Ed25519
// verification, one signature) and prints each figure as a ratio to it.
//
//	go run ./tools/loadgen -server http://127.0.0.1:8080 -key KEY -scenario status -concurrency 8 -duration 30s
//
// The key needs products:write, licences:write and licences:read. The
// public routes allow 30 requests a minute per client address: run the
// server with LICENTIA_TRUSTED_PROXIES=127.0.0.1/32 and pass -forwarded so
// each request comes from a distinct X-Forwarded-For address. The admin
// routes allow 300 a minute per key and route, which bounds find, read and
// issue.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
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
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "http://127.0.0.1:8080", "base URL of the service")
	key := fs.String("key", "", "administration API key (products:write, licences:write, licences:read)")
	scenario := fs.String("scenario", "status", "status, activate, find, read or issue")
	concurrency := fs.Int("concurrency", 8, "workers (closed loop) or most requests in flight (open loop)")
	rate := fs.Float64("rate", 0, "requests a second, open loop; 0 runs closed loop")
	duration := fs.Duration("duration", 30*time.Second, "how long to drive the load")
	pid := fs.Int("pid", 0, "server process id, to read its CPU time from /proc")
	forwarded := fs.Bool("forwarded", false, "send a distinct X-Forwarded-For per request")
	licences := fs.Int("licences", 200, "licences to issue for find and read")
	floor := fs.Bool("floor", false, "then drive an in-process floor handler and print ratios")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *key == "":
		return fmt.Errorf("-key is required")
	case *concurrency < 1:
		return fmt.Errorf("-concurrency must be at least 1")
	case *duration <= 0:
		return fmt.Errorf("-duration must be positive")
	case *rate < 0:
		return fmt.Errorf("-rate must not be negative")
	case *licences < 1:
		return fmt.Errorf("-licences must be at least 1")
	}
	cfg := runConfig{concurrency: *concurrency, rate: *rate, duration: *duration, forwarded: *forwarded}
	base := strings.TrimRight(*server, "/")
	c := newClient(base, cfg.concurrency)

	fmt.Fprintf(stderr, "setting up %s on %s\n", *scenario, base)
	fx, err := setup(ctx, c, *key, *scenario, cfg.concurrency, *licences, cfg.forwarded)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	sc, err := scenarioOf(*scenario, fx, *key)
	if err != nil {
		return err
	}

	fmt.Fprintf(stderr, "driving %s for %s\n", *scenario, cfg.duration)
	ticks := clockTicks()
	pidStr := strconv.Itoa(*pid)
	var srvBefore, selfBefore uint64
	if *pid > 0 {
		if srvBefore, err = cpuTicks(pidStr); err != nil {
			return fmt.Errorf("read server cpu: %w", err)
		}
		selfBefore, _ = cpuTicks("self")
	}
	res, elapsed := drive(ctx, c, sc, cfg)
	real := newReport(base, *scenario, cfg, res, elapsed)
	var clientPerReq float64 // this process's CPU seconds a request
	if *pid > 0 {
		after, err := cpuTicks(pidStr)
		if err != nil {
			return fmt.Errorf("read server cpu: %w", err)
		}
		selfAfter, _ := cpuTicks("self")
		secs := float64(after-srvBefore) / ticks
		real.CPU = &CPU{PID: *pid, Seconds: secs, PerRequest: 1000 * div(secs, float64(real.Requests))}
		clientPerReq = div(float64(selfAfter-selfBefore)/ticks, float64(real.Requests))
	}
	out := output{Run: real}
	if err := ctx.Err(); err != nil {
		return err
	}

	if *floor {
		fl, err := runFloor(ctx, fx, cfg, *pid > 0, ticks, clientPerReq)
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		r := ratioOf(real, fl)
		out.Floor, out.Ratio = fl, &r
		err = writeTable(stderr, []*Report{real, fl}, []string{*scenario, "floor"}, &r)
		if err != nil {
			return err
		}
	} else if err := writeTable(stderr, []*Report{real}, []string{*scenario}, nil); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// runFloor drives the floor handler with the load of the real run. The
// floor runs in this process, so its CPU time is estimated: this
// process's minus what the client spent a request during the real run.
// The client's cost a request is not the same at the floor's higher
// throughput, so the estimate is rough (it can fall below the cost of the
// two Ed25519 operations alone); running the floor in a child process
// read through /proc would measure it as the server is measured.
func runFloor(ctx context.Context, fx *fixture, cfg runConfig, withCPU bool, ticks, clientPerReq float64) (*Report, error) {
	base, stop, err := startFloor(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	licenceKey := "LOADGEN-FLOOR-KEY"
	if len(fx.keys) > 0 {
		licenceKey = fx.keys[0]
	}
	bodies := make([][]byte, cfg.concurrency)
	for w := range bodies {
		bodies[w] = mustJSON(map[string]string{"licence_key": licenceKey, "machine_id": fmt.Sprintf("lg-%s-w%d", fx.runID, w)})
	}
	sc := func(w int, _ uint64) request {
		return request{method: "POST", path: "/v1/activations/status", body: bodies[w%len(bodies)]}
	}
	c := newClient(base, cfg.concurrency)
	before, _ := cpuTicks("self")
	res, elapsed := drive(ctx, c, sc, cfg)
	after, _ := cpuTicks("self")
	r := newReport(base, "floor", cfg, res, elapsed)
	if withCPU {
		secs := max(float64(after-before)/ticks-clientPerReq*float64(r.Requests), 0)
		r.CPU = &CPU{PID: os.Getpid(), Seconds: secs, PerRequest: 1000 * div(secs, float64(r.Requests))}
	}
	return r, nil
}

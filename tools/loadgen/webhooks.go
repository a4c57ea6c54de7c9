package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// runWebhooks is the webhooks command, which measures delivery: it runs a
// TLS receiver for several endpoints, makes licence changes as fast as the
// service takes them (new-seat activations, each an activation.created
// event), waits until every event has reached every endpoint, and reports
// deliveries a second from the first change to the last delivery, the
// latency from each change to its delivery, duplicates and missing
// deliveries. With -pid (and -db-pid) it reports the CPU time the server
// (and the database) spent over the run, making the changes included, per
// delivery.
//
// The service delivers only to https on port 443 at public addresses, so
// the receiver is reached through the test-only pins. First
//
//	go run ./tools/loadgen webhooks -init DIR -receiver 127.0.0.1:8443
//
// writes a CA and a receiver certificate into DIR and prints the two
// settings for the server. Start the server with them, with
// LICENTIA_BASE_URL set (webhooks need it) and
// LICENTIA_TRUSTED_PROXIES=127.0.0.1/32 (each activation comes from its own
// X-Forwarded-For address, as the public routes allow 30 requests a minute
// per address), then
//
//	go run ./tools/loadgen webhooks -dir DIR -receiver 127.0.0.1:8443 -server URL -key KEY
//
// The key needs products:write, licences:write and webhooks:write, on a
// plan with room for the endpoints (deleted again at the end).
func runWebhooks(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadgen webhooks", flag.ContinueOnError)
	fs.SetOutput(stderr)
	initDir := fs.String("init", "", "write a CA and a receiver certificate into this directory, print the server settings and exit")
	host := fs.String("host", "hooks.loadgen.example", "with -init: the endpoints' host name")
	dir := fs.String("dir", "", "directory written by -init")
	addr := fs.String("receiver", "127.0.0.1:8443", "address the receiver listens on")
	server := fs.String("server", "http://127.0.0.1:8080", "base URL of the service")
	key := fs.String("key", "", "administration API key (products:write, licences:write, webhooks:write)")
	endpoints := fs.Int("endpoints", 3, "webhook endpoints to fan every event out to")
	changes := fs.Int("changes", 10000, "licence changes to make")
	licences := fs.Int("licences", 20, "licences the activations are spread over")
	concurrency := fs.Int("concurrency", 8, "changes in flight")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long to wait for every delivery")
	pid := fs.Int("pid", 0, "server process id, to read its CPU time from /proc")
	dbPID := fs.Int("db-pid", 0, "database server's main process id (PostgreSQL's postmaster), to read the CPU time of it and its backends")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *initDir != "" {
		return initWebhooks(*initDir, *host, *addr, stdout)
	}
	switch {
	case *dir == "" || *key == "":
		return errors.New("-dir and -key are required (or -init DIR)")
	case *endpoints < 1 || *changes < 1 || *licences < 1 || *concurrency < 1:
		return errors.New("-endpoints, -changes, -licences and -concurrency must be at least 1")
	}
	cert, hookHost, err := loadHookCert(*dir)
	if err != nil {
		return err
	}
	ledger := newHookLedger(time.Now)
	stopReceiver, err := startHookReceiver(*addr, cert, ledger)
	if err != nil {
		return err
	}
	defer stopReceiver()

	c, keys := newClient(strings.TrimRight(*server, "/"), *concurrency), newKeyRing([]string{*key})
	fmt.Fprintf(stderr, "setting up %d licences and %d endpoints on %s\n", *licences, *endpoints, c.base)
	run := randomID(8) // names the run's product, endpoints and machines
	licenceKeys, err := hookLicences(ctx, c, keys, run, *licences)
	if err != nil {
		return err
	}
	ids, err := hookEndpoints(ctx, c, keys, ledger, hookHost, run, *endpoints)
	defer func() {
		// Plans count endpoints: remove this run's even when it failed.
		if err := deleteHookEndpoints(context.WithoutCancel(ctx), c, keys, ids); err != nil {
			fmt.Fprintln(stderr, "loadgen: delete endpoints:", err)
		}
	}()
	if err != nil {
		return err
	}

	fmt.Fprintf(stderr, "making %d changes, %d in flight\n", *changes, *concurrency)
	m := hookMeasure{pid: *pid, dbPID: *dbPID, ticks: clockTicks()}
	if err := m.begin(); err != nil {
		return err
	}
	made := makeHookChanges(ctx, c, ledger, run, licenceKeys, *changes, *concurrency)
	m.changesDone = time.Now()
	fmt.Fprintf(stderr, "%d changes made in %s; waiting for deliveries\n", made.ok, m.changesDone.Sub(m.start).Round(time.Millisecond))
	waitHooks(ctx, ledger, *timeout)
	rep, err := m.report(ledger.tally(), made, *endpoints)
	if err != nil {
		return err
	}
	if err := rep.table(stderr); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return err
	}
	if rep.Missing > 0 || rep.Extra > 0 || made.failed > 0 {
		return fmt.Errorf("%d deliveries missing, %d extra events, %d changes failed", rep.Missing, rep.Extra, made.failed)
	}
	return nil
}

// initWebhooks writes the certificates and prints the server's settings.
func initWebhooks(dir, host, addr string, stdout io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("-receiver %q: %w", addr, err)
	}
	if err := writeHookCerts(abs, host, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "LICENTIA_WEBHOOK_RESOLVE=%s:443:%s\nLICENTIA_WEBHOOK_CA_FILE=%s\n", host, addr, filepath.Join(abs, hookCAFile))
	return nil
}

// startHookReceiver serves ledger over TLS on addr until stop is called.
func startHookReceiver(addr string, cert tls.Certificate, ledger *hookLedger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	srv := &http.Server{
		Handler:           ledger,
		ConnState:         ledger.ConnState,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// Connections the service drops mid-handshake are its business.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go srv.ServeTLS(ln, "", "")
	return func() { srv.Close() }, nil
}

// hookLicences creates a product and n licences with room for every
// machine, and returns their keys. Spreading the activations over several
// licences keeps them from queueing behind one licence's seat count.
func hookLicences(ctx context.Context, c *client, keys *keyRing, run string, n int) ([]string, error) {
	f := &fixture{runID: "hooks-" + run}
	if err := f.createProduct(ctx, c, keys); err != nil {
		return nil, err
	}
	if err := f.issue(ctx, c, keys, n); err != nil {
		return nil, err
	}
	return f.licenceKeys, nil
}

// hookEndpoints adds n endpoints https://host/run/eN for activation.created
// and registers their secrets with the ledger. It returns the ids of those
// it added, also on failure, so they can be deleted.
func hookEndpoints(ctx context.Context, c *client, keys *keyRing, ledger *hookLedger, host, run string, n int) ([]string, error) {
	var ids []string
	for i := range n {
		path := fmt.Sprintf("/%s/e%d", run, i+1)
		var out struct {
			Endpoint struct {
				ID string `json:"id"`
			} `json:"webhook_endpoint"`
			Secret string `json:"secret"`
		}
		err := c.call(ctx, request{method: http.MethodPost, path: "/v1/admin/webhooks", key: keys.next(), body: mustJSON(map[string]any{
			"url": "https://" + host + path, "event_types": []string{"activation.created"},
			"description": "loadgen " + run,
		})}, false, &out)
		if err != nil {
			return ids, fmt.Errorf("add endpoint: %w", err)
		}
		ids = append(ids, out.Endpoint.ID)
		if err := ledger.addEndpoint(path, out.Secret); err != nil {
			return ids, fmt.Errorf("endpoint %s: %w", out.Endpoint.ID, err)
		}
	}
	return ids, nil
}

func deleteHookEndpoints(ctx context.Context, c *client, keys *keyRing, ids []string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var errs []error
	for _, id := range ids {
		if err := c.call(ctx, request{method: http.MethodDelete, path: "/v1/admin/webhooks/" + id, key: keys.next()}, false, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// hookChanges counts the changes made.
type hookChanges struct {
	ok, failed int64
	errors     map[string]int64 // first error text of each status
}

// makeHookChanges activates n new machines, concurrency at a time, and
// tells the ledger of each activation created.
func makeHookChanges(ctx context.Context, c *client, ledger *hookLedger, run string, keys []string, n, concurrency int) hookChanges {
	var seq atomic.Int64
	var mu sync.Mutex
	res := hookChanges{errors: map[string]int64{}}
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for i := seq.Add(1) - 1; i < int64(n) && ctx.Err() == nil; i = seq.Add(1) - 1 {
				var out struct {
					Activation struct {
						ID string `json:"id"`
					} `json:"activation"`
				}
				a, err := c.send(ctx, request{method: http.MethodPost, path: "/v1/activations",
					body: activateBody(keys[i%int64(len(keys))], fmt.Sprintf("lg-%s-%d", run, i))}, true)
				status := a.status
				if err == nil && status == http.StatusCreated {
					if err = json.Unmarshal(a.body, &out); err == nil {
						ledger.expect("activation.created " + out.Activation.ID)
					}
				}
				mu.Lock()
				switch {
				case err == nil && status == http.StatusCreated:
					res.ok++
				case err == nil:
					res.failed++
					res.errors[strconv.Itoa(status)+" (not a new seat)"]++
				default:
					res.failed++
					res.errors[strconv.Itoa(status)]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return res
}

// waitHooks waits until every delivery has arrived, ctx is done or
// timeout has passed.
func waitHooks(ctx context.Context, ledger *hookLedger, timeout time.Duration) {
	deadline := time.After(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !ledger.complete() {
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			return
		case <-tick.C:
		}
	}
}

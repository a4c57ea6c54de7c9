// Command activate is an example application using the Licentia SDK: it
// activates a licence key on this machine, checks it (online at most once a
// day) and prints whether the application may run.
//
//	go run ./examples/activate -server https://licensing.example.com \
//	    -product-id photo-editor -prefix PHOTO -public-key <64 hex> \
//	    -key PHOTO_048RD-...
//
// Run it again without -key: it answers from the stored verdict until the
// next daily check is due.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/licentia/licentia/sdk"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes: the application may run, it may not, or the command was
// used wrongly.
const (
	exitValid   = 0
	exitLocked  = 1
	exitProblem = 2
)

type options struct {
	server, key, productID, prefix, publicKeys, stateFile, machineID string
	major                                                            int
	deactivate                                                       bool
}

func parse(args []string, stderr io.Writer) (*options, error) {
	var o options
	fs := flag.NewFlagSet("activate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.server, "server", "", "licence server base URL, such as https://licensing.example.com")
	fs.StringVar(&o.key, "key", "", "licence key to activate on this machine (omit to check the stored one)")
	fs.StringVar(&o.productID, "product-id", "", "product id")
	fs.StringVar(&o.prefix, "prefix", "", "the product's key prefix")
	fs.StringVar(&o.publicKeys, "public-key", "", "the product's public keys, 64 hex characters each, comma-separated")
	fs.StringVar(&o.stateFile, "state-file", "", "where the licence state is kept (default: the user's config directory)")
	fs.StringVar(&o.machineID, "machine-id", "", "machine id to use instead of this machine's")
	fs.IntVar(&o.major, "major", 1, "the application's major version")
	fs.BoolVar(&o.deactivate, "deactivate", false, "free this machine's seat and forget the licence")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"-server", o.server}, {"-product-id", o.productID}, {"-prefix", o.prefix}, {"-public-key", o.publicKeys},
	} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return &o, nil
}

// client builds the SDK client: the product as this build ships it, this
// machine's id, and a file for the state.
func (o *options) client() (*sdk.Client, error) {
	product := sdk.Product{ID: o.productID, KeyPrefix: o.prefix}
	for _, h := range strings.Split(o.publicKeys, ",") {
		pub, err := sdk.ParsePublicKey(h)
		if err != nil {
			return nil, fmt.Errorf("-public-key: %w", err)
		}
		product.PublicKeys = append(product.PublicKeys, pub)
	}
	machineID := o.machineID
	if machineID == "" {
		// The salt is the application's own: its ids cannot be matched with
		// another application's.
		id, err := sdk.MachineID("licentia-example/" + o.productID)
		if err != nil {
			return nil, err
		}
		machineID = id
	}
	state := o.stateFile
	if state == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil, err
		}
		state = filepath.Join(dir, o.productID, "licence.json")
	}
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		return nil, err
	}
	// No HTTPClient: the SDK's default, with a timeout. No Now: the system
	// clock. No MaxOffline: never lock for being offline.
	return sdk.NewClient(sdk.Config{
		BaseURL: o.server, Product: product, Major: o.major, MachineID: machineID, Store: sdk.FileStore(state),
	})
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitValid
	}
	if err != nil {
		fmt.Fprintln(stderr, "activate:", err)
		return exitProblem
	}
	c, err := o.client()
	if err != nil {
		fmt.Fprintln(stderr, "activate:", err)
		return exitProblem
	}
	if o.deactivate {
		changed, err := c.Deactivate(ctx)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitProblem
		}
		fmt.Fprintf(stdout, "seat freed: %v; licence forgotten on this machine\n", changed)
		return exitValid
	}
	if o.key != "" {
		host, _ := os.Hostname()
		a, err := c.Activate(ctx, o.key, sdk.Machine{Label: host, OS: runtime.GOOS, AppVersion: fmt.Sprintf("%d.0.0", o.major)})
		switch {
		case err != nil:
			// Not fatal: a failure to reach the server never takes away a
			// licence already held, and Check says where things stand.
			fmt.Fprintln(stderr, err)
		case a.Created:
			fmt.Fprintln(stdout, "activated: a seat was taken on this machine")
		default:
			fmt.Fprintln(stdout, "activated: this machine already held a seat")
		}
	}
	st, err := c.Check(ctx)
	if err != nil && !errors.Is(err, sdk.ErrNoLicence) {
		fmt.Fprintln(stderr, err)
	}
	printStatus(stdout, st)
	if !st.Valid {
		return exitLocked
	}
	return exitValid
}

func printStatus(w io.Writer, st sdk.Status) {
	if st.Valid {
		fmt.Fprintln(w, "licence: valid")
	} else {
		fmt.Fprintf(w, "licence: not valid (%s) %s\n", st.Reason, st.Reason.Message())
	}
	if st.LicenceID != "" {
		fmt.Fprintln(w, "licence id:", st.LicenceID)
	}
	if v := st.Verdict; v != nil {
		exp := "never"
		if v.ExpiresAt != nil {
			exp = *v.ExpiresAt
		}
		fmt.Fprintf(w, "state: %s, major %d, expires %s, seat on this machine: %v\n", v.State, v.Major, exp, st.Seated)
		fmt.Fprintf(w, "verdict valid until: %s\n", v.ValidUntil)
	}
	if !st.CheckedAt.IsZero() {
		fmt.Fprintln(w, "last online check:", st.CheckedAt.UTC().Format(time.RFC3339))
	}
	if !st.NextCheckAt.IsZero() {
		fmt.Fprintln(w, "next online check:", st.NextCheckAt.UTC().Format(time.RFC3339))
	}
	if st.Stale {
		fmt.Fprintln(w, "stale: the last online check failed or the verdict is past its validity; the result is kept")
	}
	if st.LastError != nil {
		fmt.Fprintln(w, "last error:", st.LastError)
	}
}

// Package servetest runs the whole service, as serve wires it, inside a
// test: on a fresh database, at an address that is also its base URL, with
// the operator commands beside it. The browser tests and the verifiers'
// tests drive it from outside, as people and programs do.
package servetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/licentia/licentia/internal/cli"
	"github.com/licentia/licentia/internal/logtest"
	"github.com/licentia/licentia/internal/store"
	"github.com/licentia/licentia/internal/store/postgres"
	"github.com/licentia/licentia/internal/store/sqlite"
)

// Service is one `licentia serve` running in this process.
type Service struct {
	// Base is its address, http://127.0.0.1:port, and LICENTIA_BASE_URL.
	Base string
	// Dir is its data directory: the outbox is Dir/outbox.
	Dir string
	// DB is LICENTIA_DATABASE_URL.
	DB   string
	Logs *logtest.Buffer
	vars map[string]string
}

// Env is the environment the service and its operator commands read.
func (s *Service) Env(stdout, stderr io.Writer) cli.Env {
	return cli.Env{Stdout: stdout, Stderr: stderr, Getenv: func(k string) string { return s.vars[k] }}
}

// Start runs serve on dbURL ("" for SQLite in a temporary data directory)
// until the test ends, and waits until it is ready. The log is shown when
// the test fails.
func Start(t *testing.T, dbURL string) *Service {
	t.Helper()
	return StartWith(t, dbURL, nil)
}

// StartWith is Start with more variables in the environment, such as a
// payment provider fake's LICENTIA_STRIPE_API_URL.
func StartWith(t *testing.T, dbURL string, more map[string]string) *Service {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if dbURL == "" {
		dbURL = "sqlite:" + filepath.Join(dir, "licentia.db")
	} else if !strings.Contains(dbURL, "pool_max_conns") {
		// A test's service needs few connections, and many tests run at
		// once on one PostgreSQL server of 100.
		sep := "?"
		if strings.Contains(dbURL, "?") {
			sep = "&"
		}
		dbURL += sep + "pool_max_conns=4"
	}
	s := &Service{Base: "http://" + addr, Dir: dir, DB: dbURL, Logs: &logtest.Buffer{}, vars: map[string]string{
		"LICENTIA_DATA_DIR":     dir,
		"LICENTIA_DATABASE_URL": dbURL,
		"LICENTIA_LISTEN":       addr,
		"LICENTIA_BASE_URL":     "http://" + addr,
	}}
	maps.Copy(s.vars, more)
	app, err := cli.NewApp(t.Context(), s.Env(io.Discard, s.Logs))
	if err != nil {
		t.Fatalf("NewApp() error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if t.Failed() {
			t.Logf("serve log:\n%s", s.Logs.String())
		}
	})
	s.waitReady(t)
	return s
}

// waitReady polls /readyz until the service answers 200.
func (s *Service) waitReady(t *testing.T) {
	t.Helper()
	for range 200 {
		if res, err := http.Get(s.Base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("the service did not become ready")
}

// Operator runs an operator command and decodes the JSON object it prints.
func (s *Service) Operator(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.RunEnv(t.Context(), args, s.Env(&stdout, &stderr)); code != 0 {
		t.Fatalf("licentia %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("licentia %s: %q: %v", strings.Join(args, " "), stdout.String(), err)
	}
	return out
}

// OpenStore opens the service's database beside it, for what a test sets
// up that no route does.
func (s *Service) OpenStore(t *testing.T) store.Store {
	t.Helper()
	var st store.Store
	var err error
	if path, ok := strings.CutPrefix(s.DB, "sqlite:"); ok {
		st, err = sqlite.Open(t.Context(), path)
	} else {
		st, err = postgres.Open(t.Context(), s.DB)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

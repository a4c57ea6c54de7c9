package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// runMainVar, set to 1 in the environment, makes the test binary run main
// instead of the tests. The tests start it under the name licentia, so
// they run this package's program as built for the tests: a second build,
// with the release's flags, shared no compiled package with the test's
// own and took minutes of a cold run. scripts/container-check.sh builds
// the image with the Dockerfile's flags in CI.
const runMainVar = "GO_WANT_LICENTIA_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainVar) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}

// installBinary puts licentia in dir: a link to the test binary, which
// runs main when the environment holds runMainVar (see binaryEnv).
func installBinary(t *testing.T, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "licentia")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// binaryEnv is env with what makes the linked test binary act as licentia.
func binaryEnv(env []string) []string {
	return append(env, runMainVar+"=1")
}

// startServe starts bin serve in dir with env, stopped with an interrupt
// when the test ends unless it was stopped before, and returns the command
// and its start-up log line that says it listens.
func startServe(t *testing.T, bin, dir string, env []string) (*exec.Cmd, map[string]any) {
	t.Helper()
	// The test's context is cancelled before cleanups run; serve must
	// outlive it until the cleanup below stops it.
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	serve := exec.CommandContext(ctx, bin, "serve")
	serve.Dir, serve.Env = dir, env
	serve.Cancel = func() error { return serve.Process.Signal(os.Interrupt) }
	stderr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatalf("licentia serve: %v", err)
	}
	listening := make(chan map[string]any, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "licentia listening" {
				listening <- line
			}
		}
	}()
	t.Cleanup(func() {
		if serve.ProcessState == nil {
			cancel()
			serve.Wait()
		}
		cancel()
	})
	select {
	case line := <-listening:
		return serve, line
	case <-time.After(30 * time.Second):
		t.Fatal("licentia serve did not say it listens within 30 seconds")
		return nil, nil
	}
}

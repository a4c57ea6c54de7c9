package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestContainerStartup checks the image's start-up outside a container, on
// every go test: the binary built with the Dockerfile's flags, started with
// its entry point and environment (on a free port), and its HEALTHCHECK
// command run against it. CI also builds and starts the image itself, on
// stand-in base images (scripts/container-check.sh, docs/operations.md).
func TestContainerStartup(t *testing.T) {
	df := readDockerfile(t)
	for _, want := range []string{"CGO_ENABLED=0 go build -trimpath", "EXPOSE 8080", `USER nonroot`,
		`ENTRYPOINT ["/licentia"]`, `CMD ["serve"]`, `HEALTHCHECK`} {
		if !strings.Contains(df.text, want) {
			t.Fatalf("Dockerfile does not contain %q", want)
		}
	}
	if df.env["LICENTIA_LISTEN"] != "0.0.0.0:8080" || df.env["LICENTIA_DATA_DIR"] != "/data" {
		t.Fatalf("Dockerfile ENV = %v, want LICENTIA_LISTEN=0.0.0.0:8080 and LICENTIA_DATA_DIR=/data", df.env)
	}

	bin := filepath.Join(t.TempDir(), "licentia")
	const pkg = "github.com/licentia/licentia/internal/build"
	ldflags := "-s -w -X " + pkg + ".version=v9.8.7 -X " + pkg + ".commit=0123456789abcdef0123456789abcdef01234567 -X " +
		pkg + ".built=2026-11-26T20:00:00Z"
	build := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	port := freePort(t)
	env := append(os.Environ(), "LICENTIA_LISTEN=0.0.0.0:"+port, "LICENTIA_DATA_DIR="+t.TempDir())
	// Nothing of the host's configuration leaks in but the two above.
	env = withoutLicentia(env, "LICENTIA_LISTEN", "LICENTIA_DATA_DIR")

	wantVersion := `{"version":"v9.8.7","commit":"0123456789abcdef0123456789abcdef01234567","go":"` + goVersion(t) +
		`","built":"2026-11-26T20:00:00.000Z","modified":false}`
	if out := run(t, bin, env, "version"); out != wantVersion {
		t.Errorf("licentia version = %s, want %s", out, wantVersion)
	}

	before := exec.CommandContext(t.Context(), bin, "healthcheck")
	before.Env = env
	if err := before.Run(); err == nil {
		t.Errorf("licentia healthcheck before serve: exit 0, want non-zero")
	}

	ctx, cancel := context.WithCancel(t.Context())
	serve := exec.CommandContext(ctx, bin, "serve")
	serve.Env = env
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
	})
	select {
	case line := <-listening:
		if b, _ := line["build"].(map[string]any); b["version"] != "v9.8.7" {
			t.Errorf("start-up line build = %v, want version v9.8.7", line["build"])
		}
		if line["addr"] != "[::]:"+port && line["addr"] != "0.0.0.0:"+port {
			t.Errorf("start-up line addr = %v, want every address on port %s", line["addr"], port)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("licentia serve did not say it listens within 30 seconds")
	}

	cmd := exec.CommandContext(t.Context(), bin, "healthcheck")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != `{"status":"ready"}` {
		t.Errorf("licentia healthcheck = %q, %v, want exit 0 and {\"status\":\"ready\"}", out, err)
	}
	if out := run(t, bin, env, "healthcheck", "--path", "/healthz"); !strings.Contains(out, `"version":"v9.8.7"`) {
		t.Errorf("licentia healthcheck --path /healthz = %s, want the build's version", out)
	}

	if err := serve.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := serve.Wait(); err != nil {
		t.Errorf("licentia serve after SIGINT: %v, want exit 0", err)
	}
}

type dockerfile struct {
	text string
	env  map[string]string
}

// readDockerfile reads the repository's Dockerfile and the variables its
// ENV instructions set.
func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	env := map[string]string{}
	for line := range strings.SplitSeq(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "ENV "); ok {
			for _, kv := range regexp.MustCompile(`(\w+)=(\S+)`).FindAllStringSubmatch(rest, -1) {
				env[kv[1]] = kv[2]
			}
		}
	}
	return dockerfile{text: text, env: env}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func withoutLicentia(env []string, keep ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "LICENTIA_") && !slices.Contains(keep, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// run runs bin with args, which must succeed, and returns its stdout.
func run(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("licentia %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// goVersion is the Go release that builds the binary.
func goVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "env", "GOVERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestContainerStartup checks the image's start-up outside a container, on
// every go test: the program started with the Dockerfile's entry point,
// command and environment (on a free port), and its HEALTHCHECK command run
// against it. The program is this package's test binary acting as licentia
// (TestMain); CI builds the image itself with the Dockerfile's flags, and
// checks the version they stamp, on stand-in base images
// (scripts/container-check.sh, docs/operations.md).
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
	health := df.healthcheck(t)
	if health[0] != "/licentia" {
		t.Fatalf("HEALTHCHECK runs %q, want the entry point /licentia", health[0])
	}

	bin := installBinary(t, t.TempDir())
	port := freePort(t)
	env := append(os.Environ(), "LICENTIA_LISTEN=0.0.0.0:"+port, "LICENTIA_DATA_DIR="+t.TempDir())
	// Nothing of the host's configuration leaks in but the two above.
	env = binaryEnv(withoutLicentia(env, "LICENTIA_LISTEN", "LICENTIA_DATA_DIR"))

	version := checkVersion(t, run(t, bin, env, "version"))

	before := exec.CommandContext(t.Context(), bin, health[1:]...)
	before.Env = env
	if err := before.Run(); err == nil {
		t.Errorf("licentia healthcheck before serve: exit 0, want non-zero")
	}

	serve, line := startServe(t, bin, "", env)
	if b, _ := line["build"].(map[string]any); b["version"] != version {
		t.Errorf("start-up line build = %v, want version %s as licentia version says", line["build"], version)
	}
	if line["addr"] != "[::]:"+port && line["addr"] != "0.0.0.0:"+port {
		t.Errorf("start-up line addr = %v, want every address on port %s", line["addr"], port)
	}

	cmd := exec.CommandContext(t.Context(), bin, health[1:]...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != `{"status":"ready"}` {
		t.Errorf("licentia healthcheck = %q, %v, want exit 0 and {\"status\":\"ready\"}", out, err)
	}
	if out := run(t, bin, env, "healthcheck", "--path", "/healthz"); !strings.Contains(out, `"version":"`+version+`"`) {
		t.Errorf("licentia healthcheck --path /healthz = %s, want the build's version %s", out, version)
	}

	if err := serve.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := serve.Wait(); err != nil {
		t.Errorf("licentia serve after SIGINT: %v, want exit 0", err)
	}
}

// checkVersion holds the output of licentia version to its shape: exactly
// the five fields, the Go release that built the binary, a commit of 40
// hexadecimal digits and a build time in the answers' format when known.
// It returns the version.
func checkVersion(t *testing.T, out string) string {
	t.Helper()
	var v struct {
		Version  string `json:"version"`
		Commit   string `json:"commit"`
		Go       string `json:"go"`
		Built    string `json:"built"`
		Modified *bool  `json:"modified"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || dec.More() {
		t.Fatalf("licentia version = %s: %v, want one object of version, commit, go, built, modified", out, err)
	}
	if v.Version == "" || v.Go != runtime.Version() || v.Modified == nil ||
		v.Commit != "" && !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(v.Commit) ||
		v.Built != "" && !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(v.Built) {
		t.Errorf("licentia version = %s, want a version, go %s, a full commit or \"\", a time or \"\", and modified", out, runtime.Version())
	}
	return v.Version
}

type dockerfile struct {
	text string
	env  map[string]string
}

// healthcheck is the command of the HEALTHCHECK instruction, in its
// exec form.
func (df dockerfile) healthcheck(t *testing.T) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^HEALTHCHECK .*\bCMD (\[.*\])\s*$`).FindStringSubmatch(df.text)
	var cmd []string
	if m == nil || json.Unmarshal([]byte(m[1]), &cmd) != nil || len(cmd) < 2 {
		t.Fatalf("Dockerfile: no HEALTHCHECK ... CMD [\"/licentia\", ...] in the exec form")
	}
	return cmd
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

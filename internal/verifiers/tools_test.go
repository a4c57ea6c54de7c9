package verifiers

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/licentia/licentia/sdk"
)

// verifiersVar turns the tests on. Unset, they skip; set, a verifier that
// cannot run fails them.
const verifiersVar = "LICENTIA_TEST_VERIFIERS"

// pythonVar names the Python that runs the Python verifier: one that can
// import cryptography. Unset, python3.
const pythonVar = "LICENTIA_TEST_PYTHON"

// tool is one verifier's command line.
type tool struct {
	name string
	cmd  []string // the command, before its arguments
	env  []string
}

// tools returns the TypeScript and Python verifiers, failing the test when
// one cannot run.
func tools(t *testing.T) []tool {
	t.Helper()
	if os.Getenv(verifiersVar) != "1" {
		t.Skipf("%s is not 1", verifiersVar)
	}
	root := moduleRoot(t)
	cli := filepath.Join(root, "sdk", "typescript", "dist", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("%v: build the TypeScript verifier first (npm ci && npm run build in sdk/typescript)", err)
	}
	python := cmp.Or(os.Getenv(pythonVar), "python3")
	ts := tool{name: "typescript", cmd: []string{"node", cli}}
	py := tool{name: "python", cmd: []string{python, "-m", "licentia_verify"},
		env: []string{"PYTHONPATH=" + filepath.Join(root, "sdk", "python", "src")}}
	for _, tl := range []tool{ts, py} {
		var stderr bytes.Buffer
		cmd := tl.command(t, "--help")
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil && !isExit(err, 2) {
			t.Fatalf("%s verifier (%s) does not run: %v %s", tl.name, strings.Join(tl.cmd, " "), err, stderr.String())
		}
	}
	return []tool{ts, py}
}

func isExit(err error, code int) bool {
	e, ok := errors.AsType[*exec.ExitError](err)
	return ok && e.ExitCode() == code
}

func (tl tool) command(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), tl.cmd[0], append(tl.cmd[1:], args...)...)
	cmd.Env = append(os.Environ(), tl.env...)
	return cmd
}

// result is what a verifier printed for one input.
type result struct {
	Outcome   string         `json:"outcome"`
	ProductID string         `json:"product_id"`
	LicenceID string         `json:"licence_id"`
	PublicKey string         `json:"public_key"`
	Verdict   map[string]any `json:"verdict"`
	Valid     *bool          `json:"valid"`
	Reason    string         `json:"reason"`
	Seated    *bool          `json:"seated"`
	Stale     *bool          `json:"stale"`
}

// batch runs the verifier on every input at once (--batch) and returns a
// result per input.
func (tl tool) batch(t *testing.T, inputs []string, args ...string) []result {
	t.Helper()
	var stdin bytes.Buffer
	for _, in := range inputs {
		b, _ := json.Marshal(in)
		stdin.Write(append(b, '\n'))
	}
	var stdout, stderr bytes.Buffer
	cmd := tl.command(t, append(args, "--batch")...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &stdin, &stdout, &stderr
	if err := cmd.Run(); err != nil && !isExit(err, 1) {
		t.Fatalf("%s verifier %s: %v\n%s", tl.name, strings.Join(args, " "), err, stderr.String())
	}
	var out []result
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s verifier printed %q: %v", tl.name, sc.Text(), err)
		}
		out = append(out, r)
	}
	if len(out) != len(inputs) {
		t.Fatalf("%s verifier answered %d of %d inputs\n%s", tl.name, len(out), len(inputs), stderr.String())
	}
	return out
}

// keyOutcome is the Go SDK's outcome for a licence key, named as the
// verifiers name it.
func keyOutcome(v *sdk.Verifier, key string) (string, *sdk.VerifiedKey) {
	k, err := v.VerifyLicenceKey(key)
	switch {
	case err == nil:
		return "valid", k
	case errors.Is(err, sdk.ErrLicenceWrongProduct):
		return "licence_wrong_product", nil
	}
	return "licence_key_invalid", nil
}

// verdictOutcome is the Go SDK's outcome for a verdict and its payload as
// JSON values.
func verdictOutcome(t *testing.T, p sdk.Product, s string) (string, map[string]any) {
	t.Helper()
	v, err := sdk.VerifyVerdict(s, p)
	if err != nil {
		return "verdict_invalid", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return "valid", m
}

// writeProduct saves a product for the verifiers' --product and returns
// the file's path.
func writeProduct(t *testing.T, name string, product any) string {
	t.Helper()
	b, err := json.Marshal(product)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// moduleRoot is the nearest directory above the package's holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package directory")
		}
		dir = parent
	}
}

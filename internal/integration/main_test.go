package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/store/storetest"
)

// binary is the licentia binary TestMain builds; empty when the tests skip.
var binary string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

// runTests builds the binary once for every test, unless PostgreSQL is not
// configured: then every test skips, naming the variable, and nothing is
// built.
func runTests(m *testing.M) int {
	if os.Getenv(storetest.PostgresURLVar) == "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "licentia-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binary, err = build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// build compiles ./cmd/licentia into dir, with the race detector when the
// tests have it, so a data race in a serve process is caught as well.
func build(dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "licentia")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/licentia")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

// moduleRoot is the nearest directory above the package's holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find module root: no go.mod above the package directory")
		}
		dir = parent
	}
}

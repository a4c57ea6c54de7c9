//go:build unix

package browser

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestSkipSaysWhy runs this package's tests as go test ./... runs them on
// a machine without Chromium configured: the skip names the variable and
// how to install Chromium, and a note saying so is printed once outside
// any test, where go test's -v is not needed to see it (TestMain).
func TestSkipSaysWhy(t *testing.T) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, chromiumVar+"=") {
			env = append(env, kv)
		}
	}
	for _, verbose := range []bool{false, true} {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestConsoleInBrowser$", "-test.count=1",
			"-test.v="+strconv.FormatBool(verbose))
		cmd.Env = env
		// Without a controlling terminal, the note goes to stdout alone.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the tests without %s: %v\n%s", chromiumVar, err, out)
		}
		text := string(out)
		for _, want := range []string{chromiumVar, "apt-get install chromium"} {
			if !strings.Contains(text, want) {
				t.Errorf("-test.v=%v: output without %q:\n%s", verbose, want, text)
			}
		}
		if verbose && !strings.Contains(text, "--- SKIP: TestConsoleInBrowser") {
			t.Errorf("-test.v=true: TestConsoleInBrowser did not skip:\n%s", text)
		}
	}
}

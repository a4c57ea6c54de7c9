package browser

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// TestMain says once why the tests skip when no browser is configured.
// go test ./... shows a passing package's output only with -v, skips
// included, so the note also goes to the terminal when there is one.
func TestMain(m *testing.M) {
	if os.Getenv(chromiumVar) == "" {
		note := "internal/browser: " + chromiumMissing()
		fmt.Println(note)
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			fmt.Fprintln(tty, note)
			tty.Close()
		}
	}
	os.Exit(m.Run())
}

// chromiumMissing says why the browser tests skip and how to run them.
func chromiumMissing() string {
	install, path := "sudo apt-get install chromium", "/usr/bin/chromium"
	if found, err := exec.LookPath("chromium"); err == nil {
		install, path = install+"; this machine has it at "+found, found
	}
	return fmt.Sprintf("%s is not set, so the web console's browser tests skip. To run them, install Chromium (%s) and run %s=%s go test ./internal/browser",
		chromiumVar, install, chromiumVar, path)
}

package cli

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openTerminal opens a pseudo-terminal pair: the program's end, which is a
// terminal, and the end that reads what the program wrote to it.
func openTerminal(t *testing.T) (program, reader *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts, ptmx
}

// On a real terminal the progress is drawn.
func TestProgressOnTerminal(t *testing.T) {
	tty, reader := openTerminal(t)
	if !isTerminal(tty) {
		t.Fatalf("isTerminal(%s) = false, want true", tty.Name())
	}
	p := newProgress(tty, "verify")
	p.say("checking")
	p.count("licences checked", 10)
	p.set(10)
	p.finish()
	p.say("done")
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(reader)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got []string
	timeout := time.After(10 * time.Second)
read:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break read
			}
			got = append(got, strings.TrimRight(l, "\r"))
			if strings.HasSuffix(l, "done") {
				break read
			}
		case <-timeout:
			break read
		}
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"verify: checking", "verify: 10 of 10 licences checked", "verify: done"} {
		if !strings.Contains(all, want) {
			t.Errorf("the terminal shows %q, want it to hold %q", all, want)
		}
	}
}

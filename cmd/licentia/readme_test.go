package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The shell blocks of README.md between these lines are run by
// TestReadmeWalkThrough, in order, in one shell.
const (
	readmeBegin = "<!-- begin readme-test -->"
	readmeEnd   = "<!-- end readme-test -->"
)

// readmeAddr is the address the README shows, serve's default; the test
// serves on a free port and reads it in the answers shown.
const readmeAddr = "127.0.0.1:8080"

// step is a run of commands of a README block and the output the README
// shows for them: one line per output line, "..." where it is elided.
type step struct {
	commands []string
	output   []string
}

// TestReadmeWalkThrough runs the walk-through of README.md's "First
// steps" as written, with bash, against licentia serve started in an empty
// directory as the README starts it (the data in ./data), with only
// LICENTIA_LISTEN set, to a free port. Each command's output must have the
// shape shown after it.
func TestReadmeWalkThrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("README.md's walk-through needs %s, which is not installed: %v", tool, err)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	steps := readmeSteps(t, string(readme))

	dir := t.TempDir()
	bin := installBinary(t, dir)
	addr := "127.0.0.1:" + freePort(t)
	env := binaryEnv(append(withoutLicentia(os.Environ()), "LICENTIA_LISTEN="+addr))
	startServe(t, bin, dir, env)

	const marker = "--- end of step ---"
	var script strings.Builder
	for _, s := range steps {
		for _, c := range s.commands {
			script.WriteString(c + "\n")
		}
		fmt.Fprintf(&script, "printf '\\n%s\\n'\n", marker)
	}
	file := filepath.Join(t.TempDir(), "walk-through.sh")
	if err := os.WriteFile(file, []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	sh := exec.CommandContext(t.Context(), "bash", "--noprofile", "--norc", file)
	sh.Dir, sh.Env, sh.Stdout, sh.Stderr = dir, env, &stdout, &stderr
	runErr := sh.Run()
	if runErr != nil || stderr.Len() > 0 {
		t.Errorf("bash README walk-through: %v, stderr:\n%s", runErr, stderr.String())
	}

	outputs := strings.Split(stdout.String(), marker+"\n")
	if len(outputs) != len(steps)+1 {
		t.Fatalf("the walk-through ended after %d of %d steps; output:\n%s", len(outputs)-1, len(steps), stdout.String())
	}
	for i, s := range steps {
		var got []string
		for line := range strings.SplitSeq(outputs[i], "\n") {
			if line != "" {
				got = append(got, line)
			}
		}
		if !matchShape(s.output, got, addr) {
			t.Errorf("README.md:\n%s\nprinted:\n%s\nwant the shape:\n%s", strings.Join(s.commands, "\n"),
				strings.Join(got, "\n"), strings.Join(s.output, "\n"))
		}
	}
}

// readmeSteps cuts the README's marked blocks into steps. A comment line
// starting with "# {" after a command shows a line of its output, and the
// comment lines right after it starting with "#  " continue that line; any
// other line is a command (or a comment that says what comes next).
func readmeSteps(t *testing.T, readme string) []step {
	t.Helper()
	var steps []step
	rest := readme
	for {
		_, after, ok := strings.Cut(rest, readmeBegin)
		if !ok {
			break
		}
		block, tail, ok := strings.Cut(after, readmeEnd)
		if !ok {
			t.Fatalf("README.md: %q without %q", readmeBegin, readmeEnd)
		}
		rest = tail
		block = strings.TrimSpace(block)
		body, ok := strings.CutPrefix(block, "```sh\n")
		if !ok || !strings.HasSuffix(body, "\n```") {
			t.Fatalf("README.md: a readme-test block holds more than one sh code block:\n%s", block)
		}
		var cur step
		for line := range strings.SplitSeq(strings.TrimSuffix(body, "\n```"), "\n") {
			switch {
			case strings.HasPrefix(line, "# {"):
				cur.output = append(cur.output, strings.TrimPrefix(line, "# "))
			case strings.HasPrefix(line, "#  ") && len(cur.output) > 0:
				cur.output[len(cur.output)-1] += strings.TrimLeft(strings.TrimPrefix(line, "#"), " ")
			default:
				if len(cur.output) > 0 {
					steps, cur = append(steps, cur), step{}
				}
				cur.commands = append(cur.commands, line)
			}
		}
		steps = append(steps, cur)
	}
	if len(steps) == 0 {
		t.Fatalf("README.md has no block between %q and %q", readmeBegin, readmeEnd)
	}
	return steps
}

// matchShape reports whether got, line by line, has the shape of want:
// the same text but where want elides with "...", and the address serve
// listens on where want shows the default one.
func matchShape(want, got []string, addr string) bool {
	if len(want) != len(got) {
		return false
	}
	for i, w := range want {
		w = strings.ReplaceAll(w, readmeAddr, addr)
		pattern := strings.ReplaceAll(regexp.QuoteMeta(w), `\.\.\.`, `.*`)
		if !regexp.MustCompile("^" + pattern + "$").MatchString(got[i]) {
			return false
		}
	}
	return true
}

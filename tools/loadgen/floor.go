package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// floorCommand is the hidden subcommand that runs the floor server. It
// runs in a child process so that its CPU time is read from /proc exactly
// as the real server's is, and so that it does not share a Go runtime
// (scheduler, garbage collector) with the load generator.
const floorCommand = "floor-serve"

// floorHandler is the least a status route can do: decode the same body,
// check one Ed25519 signature (the licence key's) and make one (the
// verdict's), and answer {"verdict": ...}. The activation fields are
// accepted too, so activation bodies can be compared with it.
func floorHandler() http.Handler {
	pub, priv, _ := ed25519.GenerateKey(nil)
	keyMsg := []byte("loadgen floor licence key payload")
	keySig := ed25519.Sign(priv, keyMsg)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			LicenceKey string `json:"licence_key"`
			MachineID  string `json:"machine_id"`
			Label      string `json:"label"`
			OS         string `json:"os"`
			AppVersion string `json:"app_version"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil || in.LicenceKey == "" || in.MachineID == "" {
			http.Error(w, `{"error":{"code":"validation_failed"}}`, http.StatusUnprocessableEntity)
			return
		}
		if !ed25519.Verify(pub, keyMsg, keySig) {
			http.Error(w, `{"error":{"code":"invalid_licence_key"}}`, http.StatusUnprocessableEntity)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		writeFloorAnswer(w, priv, in.LicenceKey, in.MachineID, time.Now())
	})
}

// writeFloorAnswer signs the floor's verdict and writes its answer,
// {"verdict": payload.signature}, to w.
func writeFloorAnswer(w io.Writer, priv ed25519.PrivateKey, licenceKey, machineID string, now time.Time) {
	payload, _ := json.Marshal(map[string]any{
		"licence_key": licenceKey, "machine_id": machineID, "issued_at": now.UTC().Format(time.RFC3339),
	})
	sig := ed25519.Sign(priv, payload)
	json.NewEncoder(w).Encode(map[string]string{
		"verdict": base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(sig),
	})
}

// emptyArg has floor-serve serve emptyHandler.
const emptyArg = "empty"

// emptyMachine is the machine id of the empty server's answer, as long as
// the load generator's.
var emptyMachine = strings.Repeat("m", 24)

// emptyHandler reads the body and answers a floor answer made once, for a
// licence key and machine id of the load generator's lengths: the floor
// without its work. Driven under the same load, it shows how far the load
// generator, the loopback and net/http alone let a server go on the
// machine: the ceiling of every status route in the same run.
func emptyHandler() http.Handler {
	_, priv, _ := ed25519.GenerateKey(nil)
	var answer bytes.Buffer
	writeFloorAnswer(&answer, priv, strings.Repeat("K", 40), emptyMachine, time.Now())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 64<<10)); err != nil {
			http.Error(w, `{"error":{"code":"validation_failed"}}`, http.StatusUnprocessableEntity)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer.Bytes())
	})
}

// serveFloor is the child's side: it serves floorHandler, or with the
// argument emptyArg emptyHandler, on a loopback port, prints the address
// on stdout and stops when ctx ends or its stdin closes, which happens
// when the parent stops it or dies.
func serveFloor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	h := floorHandler()
	switch {
	case len(args) == 1 && args[0] == emptyArg:
		h = emptyHandler()
	case len(args) > 0:
		return fmt.Errorf("%s takes no argument but %s", floorCommand, emptyArg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintln(stdout, ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if err := srv.Close(); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// floorProcess is a running floor server.
type floorProcess struct {
	cmd   *exec.Cmd
	stdin io.Closer
	base  string // http://address
}

// startFloor starts loadgen again as a floor server, with args for
// floor-serve, and waits for the address it prints.
func startFloor(stderr io.Writer, args ...string) (*floorProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start floor: %w", err)
	}
	cmd := exec.Command(exe, append([]string{floorCommand}, args...)...)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start floor: %w", err)
	}
	p := &floorProcess{cmd: cmd, stdin: stdin}
	addr := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		addr <- strings.TrimSpace(line)
	}()
	select {
	case a := <-addr:
		if a == "" {
			p.stop()
			return nil, fmt.Errorf("start floor: no address printed")
		}
		p.base = "http://" + a
		return p, nil
	case <-time.After(10 * time.Second):
		p.stop()
		return nil, fmt.Errorf("start floor: no address after 10s")
	}
}

// pid is the floor server's process id.
func (p *floorProcess) pid() string { return fmt.Sprint(p.cmd.Process.Pid) }

// stop closes the child's stdin, which ends it, and waits for it; a child
// that does not end within five seconds is killed.
func (p *floorProcess) stop() error {
	p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		return <-done
	}
}

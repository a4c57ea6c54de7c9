package sqlite

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// The lock file beside a database tells which processes are using it.
// Every serve holds it shared, so that several may share one database;
// migrate-data holds it exclusively, so that it never copies a database
// that a serve may still write to (writes acknowledged after the copy
// began would be lost), and no serve starts on a database being moved.
// Each holder adds a line with its pid and command, so that a refusal
// names the process. The file is never removed: a process that stops
// lets go of its lock, and the first holder alone starts the list afresh.

// Holder is a process named in a database's lock file.
type Holder struct {
	PID     int
	Command string
}

func (h Holder) String() string { return fmt.Sprintf("%s (pid %d)", h.Command, h.PID) }

// InUseError reports that other processes hold the lock file of the
// database at Path.
type InUseError struct {
	Path string
	// Holders are the processes the lock file names that are running, or
	// every one named when none of them runs here (they may run in
	// another container sharing the volume); none when it names none.
	Holders []Holder
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("the database %s is in use by %s", e.Path, e.Who())
}

// Who names the holders: "serve (pid 812), serve (pid 907)".
func (e *InUseError) Who() string {
	if len(e.Holders) == 0 {
		return "another process"
	}
	names := make([]string, len(e.Holders))
	for i, h := range e.Holders {
		names[i] = h.String()
	}
	return strings.Join(names, ", ")
}

// Lock is a hold on a database's lock file.
type Lock struct {
	f    *os.File
	once sync.Once
	err  error
}

// Close lets the lock go. Only the first call does anything.
func (l *Lock) Close() error {
	l.once.Do(func() { l.err = l.f.Close() })
	return l.err
}

// LockPath is the lock file of the database at path.
func LockPath(path string) string { return path + "-lock" }

// LockShared holds the lock file of the database at path together with
// any other process holding it shared, as command (serve). It refuses with
// an *InUseError while a process of another command holds it exclusively.
func LockShared(path, command string) (*Lock, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	if err := holdShared(f, path, command); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f}, nil
}

func holdShared(f *os.File, path, command string) error {
	err := flock(f, lockExclusive)
	if err == nil {
		// Alone: the lines of processes gone are dropped.
		if err := restart(f, path, command); err != nil {
			return err
		}
		// Not atomic: at worst this waits for a process that took the
		// lock between the two calls.
		return lockError(path, flock(f, lockShared|lockWait))
	}
	if !errors.Is(err, errWouldBlock) {
		return lockError(path, err)
	}
	if err := flock(f, lockShared); errors.Is(err, errWouldBlock) {
		holders, err := readHolders(f)
		if err != nil {
			return err
		}
		if others := otherCommands(holders, command); len(others) > 0 {
			return &InUseError{Path: path, Holders: running(others)}
		}
		// The exclusive holder is a process of this command starting the
		// list afresh, for a moment.
		if err := flock(f, lockShared|lockWait); err != nil {
			return lockError(path, err)
		}
	} else if err != nil {
		return lockError(path, err)
	}
	if _, err := f.WriteString(line(command)); err != nil {
		return diskFull(path, lockError(path, err))
	}
	return nil
}

// LockExclusive holds the lock file of the database at path alone, as
// command (migrate-data), without waiting. It refuses with an *InUseError
// while any other process holds it.
func LockExclusive(path, command string) (*Lock, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	if err := holdExclusive(f, path, command); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f}, nil
}

func holdExclusive(f *os.File, path, command string) error {
	err := flock(f, lockExclusive)
	if errors.Is(err, errWouldBlock) {
		holders, err := readHolders(f)
		if err != nil {
			return err
		}
		return &InUseError{Path: path, Holders: running(holders)}
	}
	if err != nil {
		return lockError(path, err)
	}
	return restart(f, path, command)
}

// lockError names the lock file of the database at path in err, if any.
func lockError(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("lock %s: %w", LockPath(path), err)
}

// openLockFile opens the lock file for appending, creating it and its
// directory for the service's user alone, as Protect does the database's.
func openLockFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return nil, diskFull(path, fmt.Errorf("open lock file: %w", err))
	}
	f, err := os.OpenFile(LockPath(path), os.O_RDWR|os.O_CREATE|os.O_APPEND, fileMode)
	if err != nil {
		return nil, diskFull(path, fmt.Errorf("open lock file: %w", err))
	}
	return f, nil
}

// restart empties the lock file f of the database at path, held
// exclusively, and names this process in it.
func restart(f *os.File, path, command string) error {
	if err := f.Truncate(0); err != nil {
		return lockError(path, err)
	}
	if _, err := f.WriteString(line(command)); err != nil {
		return diskFull(path, lockError(path, err))
	}
	return nil
}

func line(command string) string { return fmt.Sprintf("%d %s\n", os.Getpid(), command) }

// readHolders reads the processes the lock file names, each once.
func readHolders(f *os.File) ([]Holder, error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	var out []Holder
	seen := map[Holder]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		pid, command, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 {
			continue
		}
		h := Holder{PID: n, Command: command}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out, nil
}

// otherCommands returns the holders of another command than command.
func otherCommands(holders []Holder, command string) []Holder {
	var out []Holder
	for _, h := range holders {
		if h.Command != command {
			out = append(out, h)
		}
	}
	return out
}

// running returns the holders whose process runs here, or all of them
// when none does.
func running(holders []Holder) []Holder {
	var out []Holder
	for _, h := range holders {
		if isRunning(h.PID) {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		return holders
	}
	return out
}

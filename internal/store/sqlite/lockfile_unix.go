//go:build unix

package sqlite

import (
	"errors"
	"os"
	"syscall"
)

// How flock takes the lock: shared or exclusive, and without waiting
// unless lockWait is set.
const (
	lockShared    = syscall.LOCK_SH
	lockExclusive = syscall.LOCK_EX
	lockWait      = 1 << 16
)

var errWouldBlock = syscall.EWOULDBLOCK

// flock takes how's lock on f: flock(2) locks belong to the open file, so
// two opens in one process exclude each other as two processes do.
func flock(f *os.File, how int) error {
	op := how &^ lockWait
	if how&lockWait == 0 {
		op |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), op)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// isRunning reports whether a process with pid runs here: a signal 0
// reaches it, or is refused for want of permission.
func isRunning(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

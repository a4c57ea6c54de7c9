package sqlite

import (
	"fmt"
	"syscall"
)

// stReadOnly is ST_RDONLY of statfs(2)'s flags.
const stReadOnly = 0x1

// checkRoom reports an error when the file system holding dir is read-only
// or has less than minRoom free.
func checkRoom(dir string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("free space of %s: %w", dir, err)
	}
	if st.Flags&stReadOnly != 0 {
		return fmt.Errorf("the database's file system is read-only")
	}
	if free := st.Bavail * uint64(st.Bsize); free < minRoom {
		return fmt.Errorf("the database's disk has %d bytes free, under %d", free, minRoom)
	}
	return nil
}

// space returns the bytes free (to the service's user) and the size of
// the file system holding dir.
func space(dir string) (free, size uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}

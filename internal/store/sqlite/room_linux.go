package sqlite

import (
	"fmt"
	"syscall"
)

// minRoom is the free space under which the database is not ready: the WAL
// may grow to 16 MiB before the checkpointer starts it over (see
// checkpoint.go), and a disk with less than that may refuse a commit.
const minRoom = 16 << 20

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

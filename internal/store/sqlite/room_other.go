//go:build !linux

package sqlite

import "errors"

// checkRoom checks nothing where the free space is not read (every system
// but Linux, which serve targets).
func checkRoom(dir string) error { return nil }

// space is not known on these systems.
func space(dir string) (free, size uint64, err error) {
	return 0, 0, errors.New("free space not read on this system")
}

//go:build linux

package sdk

import (
	"os"
	"path/filepath"
	"strings"
)

// rawComponents reads, on Linux: the board's serial, else the firmware's
// product UUID (/sys/class/dmi/id, readable by root only on many systems,
// so often absent); the serial of the disk holding / (udev's ID_SERIAL);
// the installation's /etc/machine-id; the primary MAC address.
func rawComponents() map[string]string {
	board := fileText("/sys/class/dmi/id/board_serial")
	if normalise(board) == "" {
		board = fileText("/sys/class/dmi/id/product_uuid")
	}
	install, _ := firstFileID("/etc/machine-id", "/var/lib/dbus/machine-id")
	return map[string]string{
		ComponentBoard: board, ComponentDisk: rootDiskSerial(),
		ComponentOSInstall: install, ComponentNetwork: primaryMAC(),
	}
}

func fileText(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// rootDiskSerial finds the block device mounted at / in /proc/self/mounts
// and its serial in /dev/disk/by-id, whose links name disks by model and
// serial; "" when / is not on a disk (a container's overlay).
func rootDiskSerial() string {
	var dev string
	for line := range strings.SplitSeq(fileText("/proc/self/mounts"), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == "/" && strings.HasPrefix(f[0], "/dev/") {
			dev = f[0]
		}
	}
	if dev == "" {
		return ""
	}
	target, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return ""
	}
	links, _ := filepath.Glob("/dev/disk/by-id/*")
	for _, l := range links {
		base := filepath.Base(l)
		if strings.HasPrefix(base, "wwn-") || strings.HasPrefix(base, "nvme-eui") {
			continue
		}
		if t, err := filepath.EvalSymlinks(l); err == nil && t == target {
			// The partition's link names its disk with -partN added.
			if i := strings.LastIndex(base, "-part"); i > 0 {
				base = base[:i]
			}
			return base
		}
	}
	return ""
}

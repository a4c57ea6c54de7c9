//go:build linux

package sdk

// osMachineID reads systemd's machine id, or D-Bus's on systems without
// systemd; both are the same 128-bit id written at installation.
func osMachineID() (string, error) {
	return firstFileID("/etc/machine-id", "/var/lib/dbus/machine-id")
}

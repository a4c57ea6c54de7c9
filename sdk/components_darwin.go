//go:build darwin

package sdk

// rawComponents reads, on macOS: the board's IOPlatformSerialNumber and
// the installation's IOPlatformUUID (ioreg; the UUID is the hardware UUID,
// kept across OS upgrades), the volume UUID of / (diskutil), and the
// primary MAC address.
func rawComponents() map[string]string {
	platform := commandOutput("/usr/sbin/ioreg", "-rd1", "-c", "IOPlatformExpertDevice")
	return map[string]string{
		ComponentBoard:     valueAfter(platform, "IOPlatformSerialNumber", "="),
		ComponentOSInstall: valueAfter(platform, "IOPlatformUUID", "="),
		ComponentDisk:      valueAfter(commandOutput("/usr/sbin/diskutil", "info", "/"), "Volume UUID", ":"),
		ComponentNetwork:   primaryMAC(),
	}
}

//go:build windows

package sdk

import (
	"os"
	"path/filepath"
	"strings"
)

// rawComponents reads, on Windows: the board's serial and the system disk's
// serial (PowerShell's CIM classes, wmic where PowerShell is missing), the
// registry's Cryptography\MachineGuid, written at installation, and the
// primary MAC address.
func rawComponents() map[string]string {
	install, _ := osMachineID()
	return map[string]string{
		ComponentBoard:     cimValue("Win32_BaseBoard", "SerialNumber", "baseboard"),
		ComponentDisk:      cimValue("Win32_DiskDrive", "SerialNumber", "diskdrive"),
		ComponentOSInstall: install,
		ComponentNetwork:   primaryMAC(),
	}
}

// cimValue reads one property of the first instance of a CIM class, by
// PowerShell, else by wmic's alias of the class.
func cimValue(class, property, alias string) string {
	ps := "powershell.exe"
	if root := os.Getenv("SystemRoot"); root != "" {
		ps = filepath.Join(root, "System32", "WindowsPowerShell", "v1.0", "powershell.exe")
	}
	out := commandOutput(ps, "-NoProfile", "-NonInteractive", "-Command",
		"(Get-CimInstance -ClassName "+class+" | Select-Object -First 1)."+property)
	if v := strings.TrimSpace(out); v != "" {
		return v
	}
	return valueAfter(commandOutput("wmic", alias, "get", property, "/value"), property, "=")
}

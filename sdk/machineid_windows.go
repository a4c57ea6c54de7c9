//go:build windows

package sdk

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// osMachineID reads HKLM\SOFTWARE\Microsoft\Cryptography\MachineGuid with
// reg.exe, so only the standard library is needed. /reg:64 reads the 64-bit
// registry view even from a 32-bit process, whose default view has no
// MachineGuid.
func osMachineID() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg := "reg"
	if root := os.Getenv("SystemRoot"); root != "" {
		reg = filepath.Join(root, "System32", "reg.exe")
	}
	out, err := exec.CommandContext(ctx, reg, "query", `HKLM\SOFTWARE\Microsoft\Cryptography`,
		"/v", "MachineGuid", "/reg:64").Output()
	if err != nil {
		return "", fmt.Errorf("%w: reg query: %v", ErrNoMachineID, err)
	}
	return parseRegQuery(string(out))
}

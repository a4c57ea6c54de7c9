//go:build darwin

package sdk

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// osMachineID reads the hardware UUID, IOPlatformUUID, through ioreg, so no
// cgo is needed.
func osMachineID() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/usr/sbin/ioreg", "-rd1", "-c", "IOPlatformExpertDevice").Output()
	if err != nil {
		return "", fmt.Errorf("%w: ioreg: %v", ErrNoMachineID, err)
	}
	return parseIOReg(string(out))
}

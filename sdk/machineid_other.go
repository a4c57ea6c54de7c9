//go:build !linux && !darwin && !windows

package sdk

import (
	"fmt"
	"runtime"
)

// osMachineID has no source of identity on this system: the application
// supplies its own stable id as Config.MachineID.
func osMachineID() (string, error) {
	return "", fmt.Errorf("%w: not supported on %s", ErrNoMachineID, runtime.GOOS)
}

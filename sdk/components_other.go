//go:build !linux && !darwin && !windows

package sdk

// rawComponents reads only the primary MAC address where the SDK knows no
// other identifier.
func rawComponents() map[string]string {
	return map[string]string{ComponentNetwork: primaryMAC()}
}

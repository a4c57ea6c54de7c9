package sdk

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrNoMachineID: the system's machine identity could not be read. The
// application may supply its own stable id instead.
var ErrNoMachineID = errors.New("machine identity not found")

// MachineID returns a stable id for this machine, fit for Config.MachineID
// and the server's rule (1 to 128 of A-Z a-z 0-9 . _ : -): 64 lower-case
// hexadecimal characters of HMAC-SHA-256, keyed with appSalt, of the
// operating system's machine identity. The raw identity never leaves the
// machine, and two applications with different salts get ids that cannot be
// matched to each other or to the raw identity.
//
// The identity is /etc/machine-id (or /var/lib/dbus/machine-id) on Linux,
// IOPlatformUUID on macOS, and the registry's Cryptography\MachineGuid on
// Windows. It survives reboots and application updates; reinstalling the
// operating system or cloning a disk image may change or share it.
func MachineID(appSalt string) (string, error) {
	if appSalt == "" {
		return "", errors.New("machine id: the application salt must not be empty")
	}
	raw, err := osMachineID()
	if err != nil {
		return "", fmt.Errorf("machine id: %w", err)
	}
	return hashMachineID(appSalt, raw), nil
}

// hashMachineID normalises the raw identity (trimmed, lower case, since
// macOS prints its UUID in upper case and Windows in lower) and keys it.
func hashMachineID(salt, raw string) string {
	m := hmac.New(sha256.New, []byte(salt))
	m.Write([]byte(strings.ToLower(strings.TrimSpace(raw))))
	return hex.EncodeToString(m.Sum(nil))
}

// firstFileID returns the content of the first of paths that holds a
// non-empty id.
func firstFileID(paths ...string) (string, error) {
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	}
	return "", fmt.Errorf("%w in %s", ErrNoMachineID, strings.Join(paths, ", "))
}

// parseIOReg finds IOPlatformUUID in the output of
// `ioreg -rd1 -c IOPlatformExpertDevice`, a line such as
//
//	"IOPlatformUUID" = "5A2F1C3E-...".
func parseIOReg(out string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.TrimSpace(name) != `"IOPlatformUUID"` {
			continue
		}
		if id := strings.Trim(strings.TrimSpace(value), `"`); id != "" {
			return id, nil
		}
	}
	return "", fmt.Errorf("%w: no IOPlatformUUID from ioreg", ErrNoMachineID)
}

// parseRegQuery finds MachineGuid in the output of `reg query`, a line such
// as
//
//	MachineGuid    REG_SZ    6f1d3c2a-...
func parseRegQuery(out string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && strings.EqualFold(f[0], "MachineGuid") && f[1] == "REG_SZ" {
			return f[2], nil
		}
	}
	return "", fmt.Errorf("%w: no MachineGuid from reg query", ErrNoMachineID)
}

package sdk

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os/exec"
	"strings"
	"time"
)

// Component names, the same on every operating system (docs/machines.md
// says what each one reads where).
const (
	ComponentBoard     = "board"
	ComponentDisk      = "disk"
	ComponentOSInstall = "os_install"
	ComponentNetwork   = "network"
)

// Components collects this machine's board, disk, OS installation and
// network identifiers and returns each as HashComponent(productID, name,
// value): only hashes leave the machine. It is best-effort: an identifier
// that cannot be read (no permission, a virtual machine without one, a
// command missing) is left out, and a machine with none gives nil, which
// activates as before. It never fails.
func Components(productID string) map[string]string {
	out := map[string]string{}
	for name, value := range rawComponents() {
		if value = normalise(value); value != "" {
			out[name] = HashComponent(productID, name, value)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// HashComponent is the hash sent for a component: 64 lower-case hex
// characters of SHA-256 over productID ":" name ":" value. The product id
// salts it, so two products' hashes of one machine cannot be matched.
func HashComponent(productID, name, value string) string {
	sum := sha256.Sum256([]byte(productID + ":" + name + ":" + value))
	return hex.EncodeToString(sum[:])
}

// normalise trims an identifier and lower-cases it (tools print UUIDs in
// either case), and drops the placeholders firmware fills empty fields with.
func normalise(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	switch v {
	case "", "none", "default string", "to be filled by o.e.m.", "not specified", "0", "system serial number",
		"00000000-0000-0000-0000-000000000000", "03000200-0400-0500-0006-000700080009":
		return ""
	}
	return v
}

// primaryMAC is the hardware address of the first interface that is up,
// not a loopback, and has a universally administered address (a random or
// virtual one changes too easily to recognise a machine by).
func primaryMAC() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	for _, i := range ifs {
		mac := i.HardwareAddr
		if i.Flags&net.FlagLoopback != 0 || i.Flags&net.FlagUp == 0 || len(mac) < 6 || mac[0]&2 != 0 {
			continue
		}
		return mac.String()
	}
	return ""
}

// commandOutput runs a command with a short deadline and returns its
// output, "" on any failure.
func commandOutput(name string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// valueAfter finds the first line of out whose first field (after
// trimming, case-insensitively) is key and returns what follows sep on it,
// unquoted: `"IOPlatformSerialNumber" = "C02..."` or `SerialNumber  ABC`.
func valueAfter(out, key, sep string) string {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), sep)
		if ok && strings.EqualFold(strings.Trim(strings.TrimSpace(name), `"`), key) {
			if v := strings.Trim(strings.TrimSpace(value), `"`); v != "" {
				return v
			}
		}
	}
	return ""
}

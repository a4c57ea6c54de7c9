package sdk

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var machineIDRule = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

func TestHashMachineID(t *testing.T) {
	a := hashMachineID("photo-editor", "4c4c4544-0052-3410-8030-b4c04f4e4d32")
	if !machineIDRule.MatchString(a) || len(a) != 64 {
		t.Errorf("hashMachineID() = %q, want 64 hex characters", a)
	}
	if b := hashMachineID("photo-editor", "  4C4C4544-0052-3410-8030-B4C04F4E4D32\n"); b != a {
		t.Errorf("hashMachineID() of the same id in upper case = %q, want %q", b, a)
	}
	if b := hashMachineID("notes", "4c4c4544-0052-3410-8030-b4c04f4e4d32"); b == a {
		t.Error("two salts gave the same id: applications could be matched")
	}
}

func TestFirstFileID(t *testing.T) {
	dir := t.TempDir()
	empty, dbus := filepath.Join(dir, "machine-id"), filepath.Join(dir, "dbus-machine-id")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dbus, []byte("0f1e2d3c4b5a69788796a5b4c3d2e1f0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if id, err := firstFileID(filepath.Join(dir, "missing"), empty, dbus); err != nil || id != "0f1e2d3c4b5a69788796a5b4c3d2e1f0" {
		t.Errorf("firstFileID() = %q, %v, want the D-Bus id", id, err)
	}
	if _, err := firstFileID(empty); !errors.Is(err, ErrNoMachineID) {
		t.Errorf("firstFileID(empty) = %v, want ErrNoMachineID", err)
	}
}

func TestParseIOReg(t *testing.T) {
	out := `+-o MacBookPro18,3  <class IOPlatformExpertDevice, id 0x100000110, registered, matched, active, busy 0 (0 ms), retain 37>
    {
      "IOPlatformSerialNumber" = "C02XXXXXXXXX"
      "IOPlatformUUID" = "5A2F1C3E-7B8D-4E6F-9A0B-1C2D3E4F5A6B"
      "IOPolledInterface" = "AppleARMWatchdogTimerHibernateHandler is not serializable"
    }
`
	if id, err := parseIOReg(out); err != nil || id != "5A2F1C3E-7B8D-4E6F-9A0B-1C2D3E4F5A6B" {
		t.Errorf("parseIOReg() = %q, %v", id, err)
	}
	if _, err := parseIOReg(`"IOPlatformSerialNumber" = "C02"`); !errors.Is(err, ErrNoMachineID) {
		t.Errorf("parseIOReg(no uuid) = %v, want ErrNoMachineID", err)
	}
}

func TestParseRegQuery(t *testing.T) {
	out := "\r\nHKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Cryptography\r\n    MachineGuid    REG_SZ    6f1d3c2a-8b4e-4f5a-9c7d-2e1b0a9f8e7d\r\n\r\n"
	if id, err := parseRegQuery(out); err != nil || id != "6f1d3c2a-8b4e-4f5a-9c7d-2e1b0a9f8e7d" {
		t.Errorf("parseRegQuery() = %q, %v", id, err)
	}
	if _, err := parseRegQuery("ERROR: The system was unable to find the specified registry key or value."); !errors.Is(err, ErrNoMachineID) {
		t.Errorf("parseRegQuery(error) = %v, want ErrNoMachineID", err)
	}
}

// MachineID on the machine running the tests: stable, and fit for the
// server's rule.
func TestMachineID(t *testing.T) {
	if _, err := MachineID(""); err == nil {
		t.Error("MachineID(\"\") = nil error, want a refusal of the empty salt")
	}
	a, err := MachineID("photo-editor")
	if errors.Is(err, ErrNoMachineID) {
		t.Skipf("this system has no machine identity: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !machineIDRule.MatchString(a) {
		t.Errorf("MachineID() = %q, not a machine id", a)
	}
	if b, _ := MachineID("photo-editor"); b != a {
		t.Errorf("MachineID() = %q then %q, want stable", a, b)
	}
}

package activation

import (
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/licentia"
)

var machineIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,` + strconv.Itoa(MaxMachineID) + `}$`)

// CheckMachineID returns why id is not a machine id, or "".
func CheckMachineID(id string) string {
	if !machineIDRE.MatchString(id) {
		return "must be 1 to 128 of A-Z a-z 0-9 . _ : -"
	}
	return ""
}

// CheckMachineField returns why a label, os or app_version is not
// acceptable, or "": 0 to 200 characters.
func CheckMachineField(s string) string {
	if len([]rune(s)) > 200 {
		return "must be at most 200 characters"
	}
	if licentia.HasControl(s) {
		return "must not contain control characters"
	}
	return ""
}

// MaxLicenceKey is the longest licence key read, in characters.
const MaxLicenceKey = 1024

// CheckLicenceKey returns why key cannot be a licence key by its length
// alone, or "".
func CheckLicenceKey(key string) string {
	if n := utf8.RuneCountInString(key); n < 1 || n > MaxLicenceKey {
		return "must be 1 to 1024 characters"
	}
	return ""
}

// Machine is what an application says about itself.
type Machine struct {
	ID         string
	Label      string
	OS         string
	AppVersion string
}

// Activate is the body of an activation: the licence key, the machine, and
// what the application says about it.
type Activate struct {
	licentia.Decoded
	LicenceKey *string `json:"licence_key" input:"required"`
	MachineID  *string `json:"machine_id" input:"required"`
	Label      *string `json:"label" input:"required"`
	OS         *string `json:"os" input:"required"`
	AppVersion *string `json:"app_version" input:"required"`
}

// Validate reports every problem of an activation: the key and the machine
// first, then each of label, os and app_version in turn.
func (in *Activate) Validate() licentia.Issues {
	fields := licentia.CheckFields(in)
	is := slices.Clone(in.Before)
	checkSeat(&is, fields, in.LicenceKey, in.MachineID)
	for _, f := range []struct {
		path  string
		value *string
	}{{"/label", in.Label}, {"/os", in.OS}, {"/app_version", in.AppVersion}} {
		is = append(is, fields.Of(f.path)...)
		is.CheckString(f.path, f.value, CheckMachineField)
	}
	return is
}

// machine is the machine the activation names.
func (in *Activate) machine() Machine {
	return Machine{ID: *in.MachineID, Label: *in.Label, OS: *in.OS, AppVersion: *in.AppVersion}
}

// Status is the body of a status check: the licence key and the machine.
type Status struct {
	licentia.Decoded
	LicenceKey *string `json:"licence_key" input:"required"`
	MachineID  *string `json:"machine_id" input:"required"`
}

// Deactivate is the body that frees a machine's seat, the same as a status
// check's.
type Deactivate = Status

// Validate reports every problem of a status check or deactivation.
func (in *Status) Validate() licentia.Issues {
	is := slices.Clone(in.Before)
	checkSeat(&is, licentia.CheckFields(in), in.LicenceKey, in.MachineID)
	return is
}

// checkSeat adds the problems of the licence key and machine id every
// activation body carries: each field's own, then their rules.
func checkSeat(is *licentia.Issues, fields licentia.Issues, key, machineID *string) {
	*is = append(*is, fields.Of("/licence_key", "/machine_id")...)
	is.CheckString("/licence_key", key, CheckLicenceKey)
	is.CheckString("/machine_id", machineID, CheckMachineID)
}

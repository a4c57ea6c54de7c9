package activation

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/licentia"
)

// CheckMachineID returns why id is not a machine id, or "": 1 to
// MaxMachineID of A-Z a-z 0-9 . _ : -. Every status check runs it, so it
// is a loop over the bytes, not a regular expression.
func CheckMachineID(id string) string {
	const rule = "must be 1 to 128 of A-Z a-z 0-9 . _ : -"
	if len(id) < 1 || len(id) > MaxMachineID {
		return rule
	}
	for i := range len(id) {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return rule
		}
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
	// Components are the hashes of the machine's parts, by name; nil when
	// the application sent none (as SDKs before components do).
	Components map[string]string
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
	// Components are optional: names to hashes of the machine's parts.
	Components map[string]string `json:"components"`
}

// Validate reports every problem of an activation: the key and the machine
// first, then each of label, os and app_version in turn, then the
// components.
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
	is = append(is, fields.Of("/components")...)
	checkComponents(&is, in.Components)
	return is
}

// checkComponents adds the problems of components, if given: their number,
// then each name and hash at /components/<name>, by name. Past the limit
// only the number is reported, so a body full of components makes one
// issue, not thousands.
func checkComponents(is *licentia.Issues, components map[string]string) {
	if components == nil {
		return
	}
	if n := len(components); n < 1 || n > licentia.MaxComponents {
		is.Add("/components", "must have 1 to %d components", licentia.MaxComponents)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(components)) {
		path := "/components/" + pointerEscaper.Replace(name)
		if msg := licentia.CheckComponentName(name); msg != "" {
			is.Add(path, "%s", msg)
			continue
		}
		if msg := licentia.CheckComponentHash(components[name]); msg != "" {
			is.Add(path, "%s", msg)
		}
	}
}

// pointerEscaper escapes a name as a JSON Pointer (RFC 6901) token.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// machine is the machine the activation names.
func (in *Activate) machine() Machine {
	return Machine{ID: *in.MachineID, Label: *in.Label, OS: *in.OS, AppVersion: *in.AppVersion, Components: in.Components}
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

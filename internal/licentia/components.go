package licentia

import (
	"regexp"
	"time"
)

// MachineMatch is a product's rule for when a machine id new on a licence
// is the same machine as a live activation's, by their components.
type MachineMatch string

// Machine match rules.
const (
	// MatchExact rebinds nothing: a new machine id is a new machine.
	MatchExact MachineMatch = "exact"
	// MatchTwo needs at least two components equal.
	MatchTwo MachineMatch = "two"
	// MatchMost needs more than half of the stored components equal.
	MatchMost MachineMatch = "most"
	// MatchAny needs one component equal.
	MatchAny MachineMatch = "any"
)

// CheckMachineMatch returns why s is not a match rule, or "".
func CheckMachineMatch(s string) string {
	switch MachineMatch(s) {
	case MatchExact, MatchTwo, MatchMost, MatchAny:
		return ""
	}
	return "must be exact, two, most or any"
}

// Component limits.
const (
	MaxComponents = 8
	// MaxTransfersPer30Days bounds a product's or licence's transfers.
	MaxTransfersPer30Days = 100
	// TransferWindow is the rolling period transfers are counted over.
	TransferWindow = 30 * 24 * time.Hour
	// TransferIdle is how long a machine must have been unseen before a
	// transfer frees its place.
	TransferIdle = 24 * time.Hour
)

var (
	componentNameRE = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
	componentHashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// CheckComponentName returns why name is not a component name, or "".
func CheckComponentName(name string) string {
	if !componentNameRE.MatchString(name) {
		return "must be a component name of 1 to 32 of a-z 0-9 _"
	}
	return ""
}

// CheckComponentHash returns why h is not a component hash, or "".
func CheckComponentHash(h string) string {
	if !componentHashRE.MatchString(h) {
		return "must be 64 lower-case hexadecimal characters"
	}
	return ""
}

// Matches reports how many components of a machine equal stored ones and
// whether that is enough by rule m. Nothing matches under exact, nor when
// either side has no components, so an application that sends none is
// never rebound.
func (m MachineMatch) Matches(stored, sent map[string]string) (int, bool) {
	if len(stored) == 0 || len(sent) == 0 {
		return 0, false
	}
	equal := 0
	for name, h := range sent {
		if stored[name] == h {
			equal++
		}
	}
	switch m {
	case MatchTwo:
		return equal, equal >= 2
	case MatchMost:
		return equal, 2*equal > len(stored)
	case MatchAny:
		return equal, equal >= 1
	}
	return equal, false
}

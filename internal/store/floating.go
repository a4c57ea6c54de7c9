package store

import "time"

// FloatingLease is a machine's place in a licence's concurrent use: held
// by a live activation until ExpiresAt. A lease past its end, or whose
// activation was freed, holds no place and is deleted by SweepLeases.
type FloatingLease struct {
	ID           string
	OrgID        string
	LicenceID    string
	ActivationID string
	// MachineID is the activation's machine, read with the lease.
	MachineID string
	TakenAt   time.Time
	ExpiresAt time.Time
}

// LeaseUse is how many leases of a licence are in use at an instant, and
// when the earliest of them ends (nil when none is).
type LeaseUse struct {
	InUse       int64
	EarliestEnd *time.Time
}

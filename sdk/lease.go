package sdk

import (
	"errors"
	"time"
)

// Lease errors.
var (
	// ErrNotALease is a verdict that names no lease of floating use.
	ErrNotALease = errors.New("verdict names no lease")
	// ErrLeaseEnded is a lease's verdict past the lease's end: the place
	// it held may be someone else's now.
	ErrLeaseEnded = errors.New("lease ended")
)

// CheckLeaseVerdict verifies a lease's verdict offline at now: signed for
// p (VerifyVerdict), about machineID, naming a lease, of a licence active
// or in trial, and not past its valid_until, which is the lease's end. A
// borrowed lease's verdict so holds until the end of the borrowing, and
// any lease's verdict is refused after its end, however long the server's
// other verdicts last.
func CheckLeaseVerdict(raw string, p Product, machineID string, now time.Time) (*Verdict, error) {
	v, err := VerifyVerdict(raw, p)
	if err != nil {
		return nil, err
	}
	if v.MachineID != machineID {
		return nil, ErrVerdictMismatch
	}
	if v.LeaseID == nil || v.LeaseExpiresAt == nil {
		return nil, ErrNotALease
	}
	until, err := v.ValidUntilTime()
	if err != nil {
		return nil, ErrVerdictInvalid
	}
	if now.After(until) {
		return nil, ErrLeaseEnded
	}
	if v.State != StateActive && v.State != StateTrial {
		return nil, ErrLeaseRefused
	}
	return v, nil
}

// ErrLeaseRefused is a lease's verdict whose licence is neither active nor
// in trial.
var ErrLeaseRefused = errors.New("lease verdict of a licence not in use")

const (
	pathLease        = "/v1/leases"
	pathLeaseRenew   = "/v1/leases/renew"
	pathLeaseRelease = "/v1/leases/release"
	// leaseRetry is the longest wait before a failed renewal is tried
	// again; it is never past half the time the lease has left.
	leaseRetry = 30 * time.Second
	// releaseTimeout bounds Close's release request.
	releaseTimeout = 10 * time.Second
)

type leaseRequest struct {
	LicenceKey  string `json:"licence_key"`
	MachineID   string `json:"machine_id"`
	BorrowHours int    `json:"borrow_hours,omitempty"`
	LeaseID     string `json:"lease_id,omitempty"`
}

type leaseAnswer struct {
	Lease struct {
		ID        string `json:"id"`
		ExpiresAt string `json:"expires_at"`
	} `json:"lease"`
	Verdict  string `json:"verdict"`
	Released bool   `json:"released"`
}

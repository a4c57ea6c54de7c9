package httpapi

import (
	"net/http"

	"github.com/licentia/licentia/internal/activation"
	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/web"
)

// leaseJSON is a lease as the lease routes show it.
type leaseJSON struct {
	ID        string `json:"id"`
	ExpiresAt string `json:"expires_at"`
}

type leaseAnswer struct {
	Lease   leaseJSON `json:"lease"`
	Verdict string    `json:"verdict"`
}

func writeLease(w http.ResponseWriter, status int, res *activation.LeaseResult) {
	writeJSON(w, status, leaseAnswer{Lease: leaseJSON{ID: res.Lease.ID, ExpiresAt: licentia.FormatTime(res.Lease.ExpiresAt)},
		Verdict: res.Verdict})
}

// takeLease answers 201 with a new lease, or 200 with the lease the
// machine held, renewed.
func (s *Server) takeLease(w http.ResponseWriter, r *http.Request) error {
	var in activation.TakeLease
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	res, err := s.activation.TakeLease(r.Context(), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	writeLease(w, status, res)
	return nil
}

func (s *Server) renewLease(w http.ResponseWriter, r *http.Request) error {
	var in activation.LeaseRef
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	res, err := s.activation.RenewLease(r.Context(), in)
	if err != nil {
		return err
	}
	writeLease(w, http.StatusOK, res)
	return nil
}

func (s *Server) releaseLease(w http.ResponseWriter, r *http.Request) error {
	var in activation.LeaseRef
	if err := web.Decode(r, nil, &in); err != nil {
		return err
	}
	released, err := s.activation.ReleaseLease(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"released": released})
	return nil
}

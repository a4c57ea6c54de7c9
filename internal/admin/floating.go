package admin

import (
	"context"
	"time"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/store"
)

// maxLeasesShown bounds the leases a licence's page lists.
const maxLeasesShown = 100

// LicenceUse is how a licence's machines are used now: the leases of
// floating use in use and the transfers of the last 30 days, with the
// limits that apply (the licence's own, else its product's).
type LicenceUse struct {
	// Leases are the leases in use, earliest end first, at most 100.
	Leases []store.FloatingLease
	// InUse counts every lease in use.
	InUse int64
	// MaxConcurrent is the limit of leases; nil when the count is off.
	MaxConcurrent *int64
	// Transfers counts the transfers of the last 30 days.
	Transfers int64
	// TransfersAllowed is how many the licence may make in 30 days.
	TransfersAllowed int64
}

// LicenceUse reads how licence id of orgID is used now; another
// organization's answers licence_not_found.
func (s *Service) LicenceUse(ctx context.Context, orgID, id string) (*LicenceUse, error) {
	l, err := s.store.Licence(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	p, err := s.store.Product(ctx, orgID, l.ProductID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	u := &LicenceUse{MaxConcurrent: l.ConcurrentAllowed(p), TransfersAllowed: l.TransfersAllowed(p)}
	if u.Leases, err = s.store.LeasesInUse(ctx, orgID, id, now, maxLeasesShown); err != nil {
		return nil, err
	}
	use, err := s.store.LeaseUseOf(ctx, orgID, id, now)
	if err != nil {
		return nil, err
	}
	u.InUse = use.InUse
	// The window is the one transfers are judged by: the 30 days up to
	// now, now included.
	if u.Transfers, err = s.store.TransfersSince(ctx, orgID, id, now.Add(-licentia.TransferWindow+time.Millisecond)); err != nil {
		return nil, err
	}
	return u, nil
}

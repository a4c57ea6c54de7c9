package admin

import (
	"context"
	"slices"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// NamedGrant is a licence's grant as people read it: its feature's name
// from the product's catalogue beside the code, and whether it ended.
type NamedGrant struct {
	Code, Name string
	// ExpiresAt is nil for a grant that lasts as long as the licence.
	ExpiresAt *time.Time
	// Ended is set once the grant's expiry has passed.
	Ended bool
}

// NameGrants are the grants gs with their names from the catalogue fs,
// each marked ended once its expiry passed at now.
func NameGrants(gs []licentia.FeatureGrant, fs []licentia.Feature, now time.Time) []NamedGrant {
	out := make([]NamedGrant, 0, len(gs))
	for _, g := range gs {
		row := NamedGrant{Code: g.Code, ExpiresAt: g.ExpiresAt, Ended: g.ExpiresAt != nil && !g.ExpiresAt.After(now)}
		if i := slices.IndexFunc(fs, func(f licentia.Feature) bool { return f.Code == g.Code }); i >= 0 {
			row.Name = fs[i].Name
		}
		out = append(out, row)
	}
	return out
}

// GrantNamer names the grants of many licences, reading each product's
// catalogue once.
type GrantNamer struct {
	s          *Service
	orgID      string
	now        time.Time
	catalogues map[string][]licentia.Feature
}

// GrantNamer names grants of orgID's licences at the service's now.
func (s *Service) GrantNamer(orgID string) *GrantNamer {
	return &GrantNamer{s: s, orgID: orgID, now: s.now(), catalogues: map[string][]licentia.Feature{}}
}

// Name is l's grants named; a licence without grants reads no catalogue.
func (n *GrantNamer) Name(ctx context.Context, l *licentia.Licence) ([]NamedGrant, error) {
	if len(l.Features) == 0 {
		return nil, nil
	}
	fs, ok := n.catalogues[l.ProductID]
	if !ok {
		var err error
		if fs, err = n.s.store.ProductFeatures(ctx, n.orgID, l.ProductID); err != nil {
			return nil, err
		}
		n.catalogues[l.ProductID] = fs
	}
	return NameGrants(l.Features, fs, n.now), nil
}

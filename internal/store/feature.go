package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/licentia/licentia/internal/licentia"
)

// storedGrant is a grant as the licence row's features column holds it:
// times as Unix milliseconds, the same in both engines.
type storedGrant struct {
	Code      string `json:"c"`
	ExpiresAt *int64 `json:"e,omitempty"`
}

// EncodeGrants is the stored form of a licence's grants, ordered by code.
func EncodeGrants(gs []licentia.FeatureGrant) string {
	if len(gs) == 0 {
		return "[]"
	}
	out := make([]storedGrant, len(gs))
	for i, g := range gs {
		out[i] = storedGrant{Code: g.Code, ExpiresAt: MillisPtr(g.ExpiresAt)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // strings and integers always encode
	}
	return string(b)
}

// DecodeGrants is the inverse of EncodeGrants; no grants read as nil.
func DecodeGrants(s string) ([]licentia.FeatureGrant, error) {
	var gs []licentia.FeatureGrant
	if s == "" || s == "[]" {
		return nil, nil
	}
	var stored []storedGrant
	if err := json.Unmarshal([]byte(s), &stored); err != nil {
		return nil, fmt.Errorf("read licence features: %w", err)
	}
	for _, g := range stored {
		gs = append(gs, licentia.FeatureGrant{Code: g.Code, ExpiresAt: FromMillisPtr(g.ExpiresAt)})
	}
	return gs, nil
}

// CountLicence adds licence l, judged at now, to c, with since the start of
// the issued and revoked counts: for counts read from the licences
// themselves (a feature filter), not from the counters.
func CountLicence(c *LicenceCounts, l *licentia.Licence, since, now time.Time) {
	c.All++
	switch l.Term() {
	case licentia.TermPerpetual:
		c.Perpetual++
	case licentia.TermTerm:
		c.Term++
	case licentia.TermSubscription:
		c.Subscription++
	}
	if l.Source == licentia.SourceProvider {
		c.Provider++
	} else {
		c.Admin++
	}
	add(c, l.DerivedState(now), 1, l.LiveActivations)
	if !l.IssuedAt.Before(since) {
		c.IssuedSince++
	}
	if l.Status == licentia.StatusRevoked && l.StatusChangedAt != nil && !l.StatusChangedAt.Before(since) {
		c.RevokedSince++
	}
}

// FeatureNotFound is the error of a feature the product does not have.
func FeatureNotFound() error { return NotFound(licentia.CodeNotFound, "Feature") }

// TooManyFeatures refuses a product's feature past MaxFeatures.
func TooManyFeatures() error {
	return &licentia.Error{Code: licentia.CodeConflict, Message: "The product has 200 features, the most it may have.",
		Details: map[string]any{"limit": licentia.MaxFeatures}}
}

// FeatureGranted refuses to delete a feature a licence grants.
func FeatureGranted() error {
	return licentia.Errorf(licentia.CodeConflict, "A licence grants this feature; take it off every licence first.")
}

// FeatureNotInCatalogue refuses a grant of a feature the product does not
// have (deleted meanwhile).
func FeatureNotInCatalogue(code string) error {
	return licentia.Errorf(licentia.CodeConflict, "The product has no feature %q.", code)
}

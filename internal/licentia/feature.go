package licentia

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Feature is one entitlement of a product's catalogue, which its licences
// may grant.
type Feature struct {
	ProductID string
	OrgID     string
	Code      string
	Name      string
	CreatedAt time.Time
}

// FeatureGrant is a feature a licence grants: until ExpiresAt, or for as
// long as the licence when it is nil.
type FeatureGrant struct {
	Code      string     `json:"code"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// Limits of the catalogue.
const (
	// MaxFeatures is the most features a product has.
	MaxFeatures = 200
	// MaxFeatureName is the longest feature name, in characters.
	MaxFeatureName = 100
)

var featureCodeRE = regexp.MustCompile(`^[a-z0-9._-]{1,64}$`)

// CheckFeatureCode returns why code is not a feature code, or "".
func CheckFeatureCode(code string) string {
	if !featureCodeRE.MatchString(code) {
		return "must be 1 to 64 of a-z, 0-9, dot, underscore and hyphen"
	}
	return ""
}

// CheckFeatureName returns why a feature name is not acceptable, or "".
func CheckFeatureName(name string) string {
	if n := len([]rune(name)); n < 1 || n > MaxFeatureName {
		return "must be 1 to 100 characters"
	}
	if HasControl(name) {
		return "must not contain control characters"
	}
	return ""
}

// SortGrants orders grants by code, as every answer and verdict lists them.
func SortGrants(gs []FeatureGrant) {
	slices.SortFunc(gs, func(a, b FeatureGrant) int { return strings.Compare(a.Code, b.Code) })
}

// GrantsInForce returns the grants of gs whose expiry has not passed at
// now, in gs's order: what a verdict signed at now carries.
func GrantsInForce(gs []FeatureGrant, now time.Time) []FeatureGrant {
	out := make([]FeatureGrant, 0, len(gs))
	for _, g := range gs {
		if g.ExpiresAt == nil || g.ExpiresAt.After(now) {
			out = append(out, g)
		}
	}
	return out
}

// EqualGrants reports whether two lists of grants, each ordered by code,
// are the same.
func EqualGrants(a, b []FeatureGrant) bool {
	return slices.EqualFunc(a, b, func(x, y FeatureGrant) bool {
		return x.Code == y.Code && (x.ExpiresAt == nil) == (y.ExpiresAt == nil) &&
			(x.ExpiresAt == nil || x.ExpiresAt.Equal(*y.ExpiresAt))
	})
}

// HasGrant reports whether gs holds code, whatever its expiry.
func HasGrant(gs []FeatureGrant, code string) bool {
	return slices.ContainsFunc(gs, func(g FeatureGrant) bool { return g.Code == code })
}

// GrantRequest is one element of a request's features: a code alone, or an
// object { code, expires_at }. Reading it never fails; what cannot be read
// is kept in Problem (and the element's path in the issue is the caller's),
// so that every element's problem is reported at once.
type GrantRequest struct {
	FeatureGrant
	Problem string
}

// UnmarshalJSON reads a string or an object of exactly code and expires_at
// (names matched exactly, as the request decoder matches top-level names).
func (g *GrantRequest) UnmarshalJSON(raw []byte) error {
	*g = GrantRequest{}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if json.Unmarshal(raw, &g.Code) != nil {
			g.Problem = "must be a feature code or an object with code and expires_at"
		}
		return nil
	}
	var fields map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		g.Problem = "must be a feature code or an object with code and expires_at"
		return nil
	}
	for name := range fields {
		if name != "code" && name != "expires_at" {
			g.Problem = fmt.Sprintf("has an unknown field %q", name)
			return nil
		}
	}
	code, ok := fields["code"]
	if !ok || json.Unmarshal(code, &g.Code) != nil {
		g.Problem = "must have a code, a string"
		return nil
	}
	if exp, ok := fields["expires_at"]; ok && string(exp) != "null" {
		var s string
		if json.Unmarshal(exp, &s) != nil {
			g.Problem = "expires_at must be an RFC 3339 time with an offset, or null"
			return nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			g.Problem = "expires_at must be an RFC 3339 time with an offset, or null"
			return nil
		}
		if msg := CheckTime(t); msg != "" {
			g.Problem = "expires_at " + msg
			return nil
		}
		t = TruncateMillis(t)
		g.ExpiresAt = &t
	}
	return nil
}

// CheckGrantRequests adds an issue at path/<i> for every element of gs that
// cannot be read, is not a feature code, repeats an earlier code, or is not
// in catalogue (when catalogue is not nil), and returns the grants ordered
// by code.
func CheckGrantRequests(is *Issues, path string, gs []GrantRequest, catalogue []Feature) []FeatureGrant {
	out := make([]FeatureGrant, 0, len(gs))
	seen := map[string]bool{}
	for i, g := range gs {
		p := fmt.Sprintf("%s/%d", path, i)
		switch {
		case g.Problem != "":
			is.Add(p, "%s", g.Problem)
		case CheckFeatureCode(g.Code) != "":
			is.Add(p, "%s", CheckFeatureCode(g.Code))
		case seen[g.Code]:
			is.Add(p, "repeats a feature given before")
		case catalogue != nil && !slices.ContainsFunc(catalogue, func(f Feature) bool { return f.Code == g.Code }):
			is.Add(p, "is not a feature of the product")
		default:
			seen[g.Code] = true
			out = append(out, g.FeatureGrant)
		}
	}
	SortGrants(out)
	return out
}

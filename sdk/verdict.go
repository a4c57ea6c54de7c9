package sdk

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// VerdictFormat is the version of the verdict format.
const VerdictFormat = 1

// DefaultVerdictDomain separates verdict signatures from every other
// signature a product key makes, when the product sets no domain of its own.
const DefaultVerdictDomain = "licentia/verdict/v1"

const verdictTag = "v1"

// ErrVerdictInvalid: the verdict is malformed, edited, or not signed by a
// key of the product.
var ErrVerdictInvalid = errors.New("verdict invalid")

// Verdict states, as the licence's derived state.
const (
	StateActive  = "active"
	StateTrial   = "trial"
	StateExpired = "expired"
	StateRevoked = "revoked"
)

// Verdict is the signed statement of the activation routes about a licence
// key on one machine (docs/verdict-format.md). Times are RFC 3339 UTC with
// milliseconds. Fields may be added; readers ignore unknown ones.
type Verdict struct {
	Format    int    `json:"format"`
	LicenceID string `json:"licence_id"`
	ProductID string `json:"product_id"`
	MachineID string `json:"machine_id"`
	// ActivationID is the machine's live activation, or null when this
	// machine holds no live seat.
	ActivationID *string `json:"activation_id"`
	// State is the licence's derived state: active, trial, expired, revoked.
	State       string  `json:"state"`
	ExpiresAt   *string `json:"expires_at"`
	TrialEndsAt *string `json:"trial_ends_at"`
	// Major is the major application version the licence is for; an
	// application of a newer major refuses it.
	Major      int    `json:"major"`
	LimitKind  string `json:"limit_kind"`
	LimitCount int64  `json:"limit_count"`
	IssuedAt   string `json:"issued_at"`
	ValidUntil string `json:"valid_until"`
	// KeyFingerprint names the public key that signed the verdict.
	KeyFingerprint string `json:"key_fingerprint"`
	// LeaseID and LeaseExpiresAt name the lease of floating use the
	// verdict was signed for (docs/floating.md); absent from other
	// verdicts. Its valid_until is never past the lease's end.
	LeaseID        *string `json:"lease_id,omitempty"`
	LeaseExpiresAt *string `json:"lease_expires_at,omitempty"`
	// Features are the licence's grants in force when the verdict was
	// signed, ordered by code; absent when there are none, so a verdict
	// without features reads as it always did.
	Features []VerdictFeature `json:"features,omitempty"`
}

// VerdictFeature is a feature the licence grants: until ExpiresAt, or for
// as long as the licence when it is nil.
type VerdictFeature struct {
	Code      string  `json:"code"`
	ExpiresAt *string `json:"expires_at"`
}

// Feature reports whether the verdict grants code at now: granted, and its
// expiry (if any) after now.
func (v *Verdict) Feature(code string, now time.Time) bool {
	for _, f := range v.Features {
		if f.Code != code {
			continue
		}
		if f.ExpiresAt == nil {
			return true
		}
		exp, err := time.Parse(time.RFC3339Nano, *f.ExpiresAt)
		return err == nil && now.Before(exp)
	}
	return false
}

// verdictMessage is what a verdict signature covers:
//
//	domain 0x00 "verdict" 0x00 payload
//
// where payload is the exact JSON bytes carried in the verdict.
func verdictMessage(domain string, payload []byte) []byte {
	m := make([]byte, 0, len(domain)+len(payload)+9)
	m = append(m, domain...)
	m = append(m, 0)
	m = append(m, "verdict"...)
	m = append(m, 0)
	return append(m, payload...)
}

var b64 = base64.RawURLEncoding

// SignVerdict encodes and signs a verdict:
//
//	"v1." base64url(payload) "." base64url(signature)
//
// without padding. The format and key fingerprint are filled in.
func SignVerdict(priv ed25519.PrivateKey, domain string, v Verdict) (string, error) {
	if domain == "" {
		domain = DefaultVerdictDomain
	}
	v.Format = VerdictFormat
	v.KeyFingerprint = Fingerprint(priv.Public().(ed25519.PublicKey))
	payload, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sig := ed25519.Sign(priv, verdictMessage(domain, payload))
	return verdictTag + "." + b64.EncodeToString(payload) + "." + b64.EncodeToString(sig), nil
}

// VerifyVerdict checks a verdict's signature against the product's keys and
// returns its content. It does not judge the content: the caller compares
// the product, machine, valid_until and state with what it expects (Client
// does).
func VerifyVerdict(s string, p Product) (*Verdict, error) {
	s = strings.TrimSpace(s)
	if len(s) > 16384 {
		return nil, ErrVerdictInvalid
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[0] != verdictTag {
		return nil, ErrVerdictInvalid
	}
	payload, err := b64.Strict().DecodeString(parts[1])
	if err != nil {
		return nil, ErrVerdictInvalid
	}
	sig, err := b64.Strict().DecodeString(parts[2])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, ErrVerdictInvalid
	}
	domain := p.VerdictDomain
	if domain == "" {
		domain = DefaultVerdictDomain
	}
	msg := verdictMessage(domain, payload)
	signed := false
	for _, pub := range p.PublicKeys {
		if len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, msg, sig) {
			signed = true
			break
		}
	}
	if !signed {
		return nil, ErrVerdictInvalid
	}
	var v Verdict
	if err := json.Unmarshal(payload, &v); err != nil {
		return nil, ErrVerdictInvalid
	}
	if v.Format != VerdictFormat || v.ProductID != p.ID {
		return nil, ErrVerdictInvalid
	}
	return &v, nil
}

// ValidUntilTime parses the verdict's valid_until.
func (v *Verdict) ValidUntilTime() (time.Time, error) {
	return time.Parse(time.RFC3339Nano, v.ValidUntil)
}

// ExpiresAtTime parses the licence's expiry; ok is false for a perpetual licence.
func (v *Verdict) ExpiresAtTime() (t time.Time, ok bool, err error) {
	if v.ExpiresAt == nil {
		return time.Time{}, false, nil
	}
	t, err = time.Parse(time.RFC3339Nano, *v.ExpiresAt)
	return t, err == nil, err
}

// Package v1reader is the verdict reader of format 1 exactly as the SDK
// shipped it before verdicts carried features, frozen: a test runs it on
// today's vectors to prove that applications built with an older SDK still
// accept today's verdicts (readers ignore unknown fields). Never edit it to
// follow the SDK; it stands for the readers already in customers' hands.
package v1reader

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

const (
	verdictFormat        = 1
	defaultVerdictDomain = "licentia/verdict/v1"
	verdictTag           = "v1"
)

// ErrVerdictInvalid: the verdict is malformed, edited, or not signed by a
// key of the product.
var ErrVerdictInvalid = errors.New("verdict invalid")

// Product is what the reader needs of a product.
type Product struct {
	ID            string
	VerdictDomain string
	PublicKeys    []ed25519.PublicKey
}

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
		domain = defaultVerdictDomain
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
	if v.Format != verdictFormat || v.ProductID != p.ID {
		return nil, ErrVerdictInvalid
	}
	return &v, nil
}

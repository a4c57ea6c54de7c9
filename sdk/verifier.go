package sdk

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Product is what offline verification needs to know of a product: its id,
// key prefix, signing domains (empty for the defaults) and the public keys it
// accepts (the current one and previous ones not retired).
type Product struct {
	ID            string
	KeyPrefix     string
	LicenceDomain string
	VerdictDomain string
	PublicKeys    []ed25519.PublicKey
}

// ParsePublicKey reads a public key in 64 hexadecimal characters.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, errors.New("public key must be 64 hexadecimal characters")
	}
	return ed25519.PublicKey(b), nil
}

// Verifier checks licence keys and verdicts offline against a set of
// products. It is safe for concurrent use once built.
type Verifier struct {
	byPrefix map[string]*Product
	byTag    map[[productTagLen]byte]*Product
}

// NewVerifier returns a Verifier for products. Prefixes are matched case
// insensitively.
func NewVerifier(products ...Product) (*Verifier, error) {
	v := &Verifier{byPrefix: map[string]*Product{}, byTag: map[[productTagLen]byte]*Product{}}
	for i := range products {
		p := products[i]
		p.KeyPrefix = strings.ToUpper(p.KeyPrefix)
		if !IsKeyPrefix(p.KeyPrefix) {
			return nil, fmt.Errorf("product %q: bad key prefix %q", p.ID, p.KeyPrefix)
		}
		if _, dup := v.byPrefix[p.KeyPrefix]; dup {
			return nil, fmt.Errorf("product %q: key prefix %q used twice", p.ID, p.KeyPrefix)
		}
		v.byPrefix[p.KeyPrefix] = &p
		v.byTag[ProductTag(p.ID)] = &p
	}
	return v, nil
}

// VerifiedKey is a licence key whose signature checked.
type VerifiedKey struct {
	ProductID string
	LicenceID string
	// PublicKey is the key that signed it: the current key or a previous one
	// not yet retired.
	PublicKey ed25519.PublicKey
}

// VerifyLicenceKey checks s. It returns ErrLicenceKeyInvalid for anything
// not issued for a known product under a key it accepts (any edit included),
// and ErrLicenceWrongProduct when the prefix names one product and a valid
// payload another.
func (v *Verifier) VerifyLicenceKey(s string) (*VerifiedKey, error) {
	k, err := ParseLicenceKey(s)
	if err != nil {
		return nil, err
	}
	p, ok := v.byPrefix[k.Prefix]
	if !ok {
		return nil, ErrLicenceKeyInvalid
	}
	if pub, ok := k.verifySignature(p.LicenceDomain, p.ID, p.PublicKeys); ok {
		return &VerifiedKey{ProductID: p.ID, LicenceID: k.LicenceIDString(), PublicKey: pub}, nil
	}
	if other, ok := v.byTag[k.ProductTag]; ok && other.ID != p.ID {
		if _, ok := k.verifySignature(other.LicenceDomain, other.ID, other.PublicKeys); ok {
			return nil, ErrLicenceWrongProduct
		}
	}
	return nil, ErrLicenceKeyInvalid
}

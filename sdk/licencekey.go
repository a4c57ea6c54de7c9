package sdk

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// LicenceKeyFormat is the version of the licence-key format this package
// reads and writes. Keys already sold keep verifying forever: a change of
// format takes a new version, and version 1 stays readable.
const LicenceKeyFormat = 1

// DefaultLicenceDomain separates licence-key signatures from every other
// signature a product key makes, when the product sets no domain of its own.
const DefaultLicenceDomain = "licentia/licence-key/v1"

// Key layout, version 1 (docs/licence-key-format.md):
//
//	PREFIX "_" base32( version[1] | product_tag[8] | licence_id[16] | signature[64] )
//
// The body is 143 characters, shown in groups of five joined by dashes.
const (
	productTagLen = 8
	licenceIDLen  = 16
	payloadLen    = 1 + productTagLen + licenceIDLen
	keyBytesLen   = payloadLen + ed25519.SignatureSize
	groupLen      = 5
	// KeySeparator follows the product's key prefix. Input normalisation
	// removes dashes and whitespace, never this.
	KeySeparator = '_'
)

// Errors of licence-key verification.
var (
	// ErrLicenceKeyInvalid: not a key the service issues, an edited key, or
	// one signed with a retired key.
	ErrLicenceKeyInvalid = errors.New("licence key invalid")
	// ErrLicenceWrongProduct: the prefix belongs to one product and the
	// signed payload to another.
	ErrLicenceWrongProduct = errors.New("licence key belongs to another product")
)

// LicenceKey is a parsed, not yet verified, licence key.
type LicenceKey struct {
	Prefix     string
	Version    byte
	ProductTag [productTagLen]byte
	LicenceID  [licenceIDLen]byte
	Signature  [ed25519.SignatureSize]byte
}

// ParseLicenceKey reads the shape of a key: surrounding whitespace is
// ignored, letters may be of either case and dashes may group the body
// anywhere. It checks nothing a signature proves; that is VerifyLicenceKey.
func ParseLicenceKey(s string) (*LicenceKey, error) {
	s = strings.TrimSpace(s)
	prefix, body, ok := strings.Cut(s, string(KeySeparator))
	if !ok || len(s) > 512 {
		return nil, ErrLicenceKeyInvalid
	}
	prefix = strings.ToUpper(prefix)
	if !IsKeyPrefix(prefix) {
		return nil, ErrLicenceKeyInvalid
	}
	b, ok := decode(strings.ReplaceAll(body, "-", ""), keyBytesLen)
	if !ok || b[0] != LicenceKeyFormat {
		return nil, ErrLicenceKeyInvalid
	}
	k := &LicenceKey{Prefix: prefix, Version: b[0]}
	copy(k.ProductTag[:], b[1:])
	copy(k.LicenceID[:], b[1+productTagLen:])
	copy(k.Signature[:], b[payloadLen:])
	return k, nil
}

// IsKeyPrefix reports whether p is a key prefix: 2 to 8 of A-Z and 2-9,
// first a letter.
func IsKeyPrefix(p string) bool {
	if len(p) < 2 || len(p) > 8 || p[0] < 'A' || p[0] > 'Z' {
		return false
	}
	for i := range len(p) {
		c := p[i]
		if !('A' <= c && c <= 'Z' || '2' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// LicenceIDString returns the licence id as a lower-case UUID.
func (k *LicenceKey) LicenceIDString() string { return formatUUID(k.LicenceID) }

// ProductTag is the first 8 bytes of SHA-256 of the product id: it names the
// product in a key's payload at a fixed length.
func ProductTag(productID string) [productTagLen]byte {
	sum := sha256.Sum256([]byte(productID))
	var t [productTagLen]byte
	copy(t[:], sum[:])
	return t
}

// licenceKeyMessage is what a licence-key signature covers:
//
//	domain 0x00 "licence-key" 0x00 version product_id 0x00 licence_id[16]
//
// The full product id is signed (the payload carries only its tag), and the
// prefix is not: a valid payload behind another product's prefix is
// recognised as belonging to that other product.
func licenceKeyMessage(domain, productID string, version byte, licenceID [licenceIDLen]byte) []byte {
	m := make([]byte, 0, len(domain)+len(productID)+48)
	m = append(m, domain...)
	m = append(m, 0)
	m = append(m, "licence-key"...)
	m = append(m, 0, version)
	m = append(m, productID...)
	m = append(m, 0)
	return append(m, licenceID[:]...)
}

// SignLicenceKey derives the key of a licence under a product's signing key.
// Ed25519 is deterministic, so the same licence under the same key always
// yields the same string; keys are derived on every read, never stored.
func SignLicenceKey(priv ed25519.PrivateKey, domain, prefix, productID, licenceID string) (string, error) {
	id, ok := parseUUID(licenceID)
	if !ok {
		return "", errors.New("sign licence key: licence id is not a UUID")
	}
	if !IsKeyPrefix(prefix) {
		return "", errors.New("sign licence key: bad key prefix")
	}
	if domain == "" {
		domain = DefaultLicenceDomain
	}
	b := make([]byte, 0, keyBytesLen)
	b = append(b, LicenceKeyFormat)
	tag := ProductTag(productID)
	b = append(b, tag[:]...)
	b = append(b, id[:]...)
	b = append(b, ed25519.Sign(priv, licenceKeyMessage(domain, productID, LicenceKeyFormat, id))...)
	return prefix + string(KeySeparator) + group(encode(b)), nil
}

// group joins s in groups of five with dashes, for reading and typing.
func group(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i += groupLen {
		if i > 0 {
			sb.WriteByte('-')
		}
		sb.WriteString(s[i:min(i+groupLen, len(s))])
	}
	return sb.String()
}

// verifySignature reports whether the key is signed for productID under one
// of pubs, and returns that key.
func (k *LicenceKey) verifySignature(domain, productID string, pubs []ed25519.PublicKey) (ed25519.PublicKey, bool) {
	if k.ProductTag != ProductTag(productID) {
		return nil, false
	}
	if domain == "" {
		domain = DefaultLicenceDomain
	}
	msg := licenceKeyMessage(domain, productID, k.Version, k.LicenceID)
	for _, pub := range pubs {
		if len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, msg, k.Signature[:]) {
			return pub, true
		}
	}
	return nil, false
}

func parseUUID(s string) ([licenceIDLen]byte, bool) {
	var id [licenceIDLen]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	if _, err := hex.Decode(id[:], []byte(h)); err != nil {
		return id, false
	}
	return id, true
}

func formatUUID(id [licenceIDLen]byte) string {
	h := hex.EncodeToString(id[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Fingerprint names a public key: the first 8 bytes of its SHA-256, in hex.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

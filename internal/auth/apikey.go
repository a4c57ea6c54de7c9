// Package auth decides who is calling: the API-key format, its hash and
// lookup, and scope checks.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

const (
	keyMarker   = "licentia_"
	prefixLen   = 12
	secretLen   = 43
	prefixChars = "abcdefghijklmnopqrstuvwxyz0123456789"
	base62Chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	keyLen      = len(keyMarker) + prefixLen + 1 + secretLen
)

// Key is an API key in clear. It is shown once, at creation, and never logged:
// String and LogValue print REDACTED.
type Key struct {
	_      [0]func() // not comparable: compare with Equal, in constant time
	secret string
}

// String returns REDACTED so a key printed by mistake leaks nothing.
func (Key) String() string { return "REDACTED" }

// Format prints REDACTED for every verb: without it, %#v and %d would print
// the struct's fields, key included.
func (Key) Format(f fmt.State, _ rune) { io.WriteString(f, "REDACTED") }

// Reveal returns the key itself, for the one answer that shows it.
func (k Key) Reveal() string { return k.secret }

// NewKey generates a key: licentia_<12 of [a-z0-9]>_<43 of base62>. The
// secret carries 43*log2(62) ≈ 256 bits from the OS random source.
func NewKey() (key Key, prefix string) {
	p := randomString(prefixChars, prefixLen)
	s := randomString(base62Chars, secretLen)
	return Key{secret: keyMarker + p + "_" + s}, p
}

// randomString draws n characters of alphabet uniformly, rejecting bytes
// that would bias the draw.
func randomString(alphabet string, n int) string {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	var buf [64]byte
	for len(out) < n {
		rand.Read(buf[:])
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}

// ParseKey returns the prefix of s when s has the shape of an API key.
func ParseKey(s string) (prefix string, ok bool) {
	if len(s) != keyLen || !strings.HasPrefix(s, keyMarker) {
		return "", false
	}
	rest := s[len(keyMarker):]
	prefix, secret := rest[:prefixLen], rest[prefixLen+1:]
	if rest[prefixLen] != '_' || !only(prefix, prefixChars) || !only(secret, base62Chars) {
		return "", false
	}
	return prefix, true
}

func only(s, alphabet string) bool {
	for i := range len(s) {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// Hash returns the SHA-256 of the whole key, the only form stored.
func Hash(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// HashMatches reports whether key hashes to stored, in constant time.
func HashMatches(key string, stored []byte) bool {
	return subtle.ConstantTimeCompare(Hash(key), stored) == 1
}

// LogValue keeps the key out of structured logs.
func (Key) LogValue() slog.Value { return slog.StringValue("REDACTED") }

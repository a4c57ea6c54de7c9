package licentia

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// NewID returns a random (version 4) UUID in lower case.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	return UUIDv4(b)
}

// UUIDv4 formats 16 random bytes as a version 4 UUID in lower case.
func UUIDv4(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// ParseUUID returns s in lower case when it is a UUID in the canonical
// 8-4-4-4-12 form (any case), and reports whether it was one.
func ParseUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
		default:
			if !isHex(c) {
				return "", false
			}
		}
	}
	return strings.ToLower(s), true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

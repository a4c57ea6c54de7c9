package licentia

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxEmail is the longest email address, in characters.
const MaxEmail = 320

// CheckEmail returns why s is not an acceptable email address, or "" when it
// is: one @, a non-empty local part, a domain with a dot, no spaces, at most
// 320 characters. Addresses are stored as sent and matched case-insensitively.
func CheckEmail(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case utf8.RuneCountInString(s) > MaxEmail:
		return "must be at most 320 characters"
	case strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || unicode.IsSpace(r) }):
		return "must not contain spaces or control characters"
	case strings.Count(s, "@") != 1:
		return "must contain exactly one @"
	}
	local, domain, _ := strings.Cut(s, "@")
	switch {
	case local == "":
		return "must have a local part before the @"
	case !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, "."):
		return "must have a domain with a dot"
	}
	return ""
}

// SameEmail reports whether two addresses are one, as the database's unique
// indexes compare them: ASCII letters folded, nothing else.
func SameEmail(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

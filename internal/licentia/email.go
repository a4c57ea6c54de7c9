package licentia

import (
	"net/mail"
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

// CheckMailableEmail returns why s is not an address the service can mail,
// or "" when it is: the email rule (CheckEmail), and net/mail.ParseAddress,
// the parser the mail library runs on every recipient, reads it as exactly
// s with no display name. Without the second half an address such as
// a..b@x.example passes the rule and then fails when its mail is built,
// after the caller was told to try again later; and <a@x.example> or
// "a"@x.example would be stored as typed but mailed to another spelling.
// Every address the service sends mail to is checked with it before
// anything is written; licence emails keep the plain rule.
func CheckMailableEmail(s string) string {
	if msg := CheckEmail(s); msg != "" {
		return msg
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "must be an address mail can be sent to"
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

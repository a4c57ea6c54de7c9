package licentia_test

import (
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// TestCheckEmail holds CheckEmail to decisions.md: one @, a non-empty local
// part, a domain with a dot, no spaces, at most 320 characters.
func TestCheckEmail(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n-len("@example.com")) + "@example.com" }
	for _, tt := range []struct {
		name  string
		email string
		ok    bool
	}{
		{"plain", "ada@example.com", true},
		{"subdomain and plus", "ada+licences@mail.example.co.uk", true},
		{"upper case kept", "Ada@Example.COM", true},
		{"dots in local part", "a.d.a@example.com", true},
		{"one-letter parts", "a@b.c", true},
		{"unicode", "adélaïde@exämple.com", true},
		{"320 characters", long(320), true},
		{"320 characters, some of two bytes", strings.Repeat("é", 308) + "@example.com", true},
		{"321 characters", long(321), false},
		{"empty", "", false},
		{"no at", "ada.example.com", false},
		{"two ats", "ada@lovelace@example.com", false},
		{"empty local part", "@example.com", false},
		{"empty domain", "ada@", false},
		{"domain without a dot", "ada@localhost", false},
		{"domain starting with a dot", "ada@.com", false},
		{"domain ending with a dot", "ada@example.", false},
		{"space", "ada lovelace@example.com", false},
		{"leading space", " ada@example.com", false},
		{"trailing space", "ada@example.com ", false},
		{"tab", "ada\t@example.com", false},
		{"newline", "ada@example.com\n", false},
		{"no-break space", "ada\u00a0lovelace@example.com", false},
		{"ideographic space", "ada@example.com\u3000", false},
		{"NUL", "ada\x00@example.com", false},
		{"DEL", "ada\x7f@example.com", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := licentia.CheckEmail(tt.email)
			if got := msg == ""; got != tt.ok {
				t.Errorf("CheckEmail(%q) = %q, want acceptable = %v", tt.email, msg, tt.ok)
			}
		})
	}
}

// TestCheckMailableEmail: the email rule, plus an address the mail
// library's parser reads as exactly itself. Licence emails keep the plain
// rule, so these stay acceptable to CheckEmail.
func TestCheckMailableEmail(t *testing.T) {
	for _, tt := range []struct {
		name  string
		email string
		ok    bool
	}{
		{"plain", "ada@example.com", true},
		{"plus and dots", "ada.lovelace+team@mail.example.co.uk", true},
		{"apostrophe", "o'brien@example.com", true},
		{"unicode", "adélaïde@exämple.com", true},
		{"the rule refuses it", "ada@localhost", false},
		{"a quote", `a"b@example.com`, false},
		{"two dots in a row", "a..b@example.com", false},
		{"a leading dot", ".ada@example.com", false},
		{"an angle bracket", "a<b@example.com", false},
		{"in angle brackets", "<ada@example.com>", false},
		{"quoted, mailed unquoted", `"ada"@example.com`, false},
		{"a comment", "ada(x)@example.com", false},
		{"two dots in the domain", "ada@example..com", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := licentia.CheckMailableEmail(tt.email)
			if got := msg == ""; got != tt.ok {
				t.Errorf("CheckMailableEmail(%q) = %q, want acceptable = %v", tt.email, msg, tt.ok)
			}
			if !tt.ok && tt.name != "the rule refuses it" && licentia.CheckEmail(tt.email) != "" {
				t.Errorf("CheckEmail(%q) refuses it; this case is for the stricter check only", tt.email)
			}
		})
	}
}

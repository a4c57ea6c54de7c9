package licentia

import (
	"strings"
	"testing"
)

func TestBrandingChecks(t *testing.T) {
	for _, tt := range []struct {
		name  string
		check func(string) string
		value string
		ok    bool
	}{
		{"display name", CheckDisplayName, "Acme Software", true},
		{"display name of 100", CheckDisplayName, strings.Repeat("é", 100), true},
		{"display name of 101", CheckDisplayName, strings.Repeat("é", 101), false},
		{"empty display name", CheckDisplayName, "", false},
		{"blank display name", CheckDisplayName, "   ", false},
		{"display name with a newline", CheckDisplayName, "Acme\nBcc: x", false},
		{"logo", CheckLogoURL, "https://acme.example/logo.png", true},
		{"logo of 2048", CheckLogoURL, "https://acme.example/" + strings.Repeat("a", 2048-21), true},
		{"logo of 2049", CheckLogoURL, "https://acme.example/" + strings.Repeat("a", 2049-21), false},
		{"logo over http", CheckLogoURL, "http://acme.example/logo.png", false},
		{"logo without host", CheckLogoURL, "https:///logo.png", false},
		{"relative logo", CheckLogoURL, "/logo.png", false},
		{"logo with a user", CheckLogoURL, "https://user@acme.example/logo.png", false},
		{"logo with a space", CheckLogoURL, "https://acme.example/my logo.png", false},
		{"javascript logo", CheckLogoURL, "javascript:alert(1)", false},
		{"accent", CheckAccent, "#0a7cff", true},
		{"upper-case accent", CheckAccent, "#0A7CFF", true},
		{"short accent", CheckAccent, "#fff", false},
		{"named accent", CheckAccent, "red", false},
		{"accent with more", CheckAccent, "#0a7cff;x", false},
	} {
		if got := tt.check(tt.value); (got == "") != tt.ok {
			t.Errorf("%s: check(%q) = %q, want ok %v", tt.name, tt.value, got, tt.ok)
		}
	}
}

package webhooks

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/licentia/licentia/internal/licentia"
)

// TestKeptText: an answer's start is stored as valid UTF-8 without NUL,
// never over 2 KB, a character cut at the 2 KB mark dropped whole.
func TestKeptText(t *testing.T) {
	cut := strings.Repeat("a", licentia.MaxResponseKept-1) + "é" // é cut after its first byte
	for _, tt := range []struct {
		name, in, want string
	}{
		{"plain", "ok", "ok"},
		{"nul", "a\x00b", "a\uFFFDb"},
		{"invalid", "a\xffb", "a\uFFFDb"},
		{"cut character", cut[:licentia.MaxResponseKept], strings.Repeat("a", licentia.MaxResponseKept-1)},
	} {
		got := keptText([]byte(tt.in))
		if got != tt.want || !utf8.ValidString(got) || len(got) > licentia.MaxResponseKept {
			t.Errorf("%s: keptText() = %q (%d bytes), want %q", tt.name, got, len(got), tt.want)
		}
	}
}

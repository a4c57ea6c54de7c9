package licentia_test

import (
	"regexp"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

var v4RE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := licentia.NewID()
		if !v4RE.MatchString(id) {
			t.Fatalf("NewID() = %q, want a lower-case version 4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("NewID() returned %q twice", id)
		}
		seen[id] = true
		if got, ok := licentia.ParseUUID(id); !ok || got != id {
			t.Fatalf("ParseUUID(NewID() = %q) = %q, %v, want it unchanged", id, got, ok)
		}
	}
}

func TestParseUUID(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want string
		ok   bool
	}{
		{"lower case", "6ba7b810-9dad-41d1-80b4-00c04fd430c8", "6ba7b810-9dad-41d1-80b4-00c04fd430c8", true},
		{"upper case normalised", "6BA7B810-9DAD-41D1-80B4-00C04FD430C8", "6ba7b810-9dad-41d1-80b4-00c04fd430c8", true},
		{"mixed case normalised", "6Ba7b810-9dAd-41d1-80B4-00c04fd430C8", "6ba7b810-9dad-41d1-80b4-00c04fd430c8", true},
		{"nil UUID", "00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000", true},
		{"empty", "", "", false},
		{"one short", "6ba7b810-9dad-41d1-80b4-00c04fd430c", "", false},
		{"one long", "6ba7b810-9dad-41d1-80b4-00c04fd430c88", "", false},
		{"no hyphens", "6ba7b8109dad41d180b400c04fd430c8", "", false},
		{"hyphen moved", "6ba7b81-09dad-41d1-80b4-00c04fd430c8", "", false},
		{"underscores", "6ba7b810_9dad_41d1_80b4_00c04fd430c8", "", false},
		{"not hex", "6ba7b810-9dad-41d1-80b4-00c04fd430cg", "", false},
		{"braces", "{6ba7b810-9dad-41d1-80b4-00c04fd430c8}", "", false},
		{"urn", "urn:uuid:6ba7b810-9dad-41d1-80b4-00c04fd430c8", "", false},
		{"spaces", " 6ba7b810-9dad-41d1-80b4-00c04fd430c", "", false},
		{"non-ASCII digit", "6ba7b810-9dad-41d1-80b4-00c04fd430٣", "", false},
		{"path traversal", "../../../../../../../../etc/passwd00", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := licentia.ParseUUID(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseUUID(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

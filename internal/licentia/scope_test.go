package licentia_test

import (
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

func TestIsKeyScope(t *testing.T) {
	if len(licentia.Scopes) != 13 {
		t.Errorf("len(Scopes) = %d, want the contract's 13", len(licentia.Scopes))
	}
	for _, s := range licentia.Scopes {
		if got, want := licentia.IsKeyScope(s), s != licentia.ScopeMembersWrite; got != want {
			t.Errorf("IsKeyScope(%q) = %v, want %v", s, got, want)
		}
	}
	for _, s := range []licentia.Scope{"", "members:write", "licences:*", "LICENCES:READ", "licences:read ", "admin"} {
		if licentia.IsKeyScope(s) {
			t.Errorf("IsKeyScope(%q) = true, want false", s)
		}
	}
}

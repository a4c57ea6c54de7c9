package signing_test

import (
	"regexp"
	"testing"
)

// TestLinkToken: a link's token is the same for one key, purpose and id,
// and differs with any of them, so a token is derived again at send time
// and names one link of one purpose only.
func TestLinkToken(t *testing.T) {
	k, other := newMasterKey(t, 1), newMasterKey(t, 2)
	tok := k.LinkToken("portal-sign-in", "0190a7c3-0000-7000-8000-000000000001")
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`).MatchString(tok) {
		t.Errorf("LinkToken() = %q, want 43 URL-safe characters", tok)
	}
	if again := k.LinkToken("portal-sign-in", "0190a7c3-0000-7000-8000-000000000001"); again != tok {
		t.Errorf("LinkToken() again = %q, want %q", again, tok)
	}
	for name, got := range map[string]string{
		"another id":      k.LinkToken("portal-sign-in", "0190a7c3-0000-7000-8000-000000000002"),
		"another purpose": k.LinkToken("invitation", "0190a7c3-0000-7000-8000-000000000001"),
		"another key":     other.LinkToken("portal-sign-in", "0190a7c3-0000-7000-8000-000000000001"),
	} {
		if got == tok {
			t.Errorf("LinkToken(%s) = the same token", name)
		}
	}
}

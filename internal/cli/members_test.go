package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/auth"
	"github.com/licentia/licentia/internal/clock"
	"github.com/licentia/licentia/internal/licentia"
)

var setupURL = regexp.MustCompile(`^http://127\.0\.0\.1:8080/console/setup/[0-9A-Za-z]{43}$`)

// TestMemberLoginLink: a new one-time link for a member, at the base URL
// when one is set; an unknown organization or member is refused.
func TestMemberLoginLink(t *testing.T) {
	h := newHarness(t)
	h.org(t, "acme", "indie")
	h.vars["LICENTIA_BASE_URL"] = "https://licences.acme.example"
	got := h.ok(t, "member", "login-link", "--org", "acme", "--email", "OWNER@acme.example")
	url, _ := got["url"].(string)
	if !regexp.MustCompile(`^https://licences\.acme\.example/console/setup/[0-9A-Za-z]{43}$`).MatchString(url) {
		t.Errorf("url = %q", url)
	}
	if at, _ := got["expires_at"].(string); !timeRE.MatchString(at) {
		t.Errorf("expires_at = %q", at)
	}
	// Only the token's hash is stored: the link is found by it.
	token := url[strings.LastIndex(url, "/")+1:]
	l, err := h.openStore(t).LoginLinkByToken(t.Context(), auth.TokenHash(token))
	if err != nil || l.UsedAt != nil {
		t.Errorf("LoginLinkByToken() = %+v, %v", l, err)
	}
	h.fail(t, licentia.CodeMemberNotFound, "member", "login-link", "--org", "acme", "--email", "nobody@acme.example")
	// An address mail cannot be sent to is refused as such, not looked up.
	for _, addr := range []string{`a"b@acme.example`, "a..b@acme.example", "a<b@acme.example"} {
		e := h.fail(t, licentia.CodeValidationFailed, "member", "login-link", "--org", "acme", "--email", addr)
		if diff := cmp.Diff([]string{"email"}, issuePaths(e)); diff != "" {
			t.Errorf("login-link --email %s: issues mismatch (-want +got):\n%s", addr, diff)
		}
	}
	h.fail(t, licentia.CodeNotFound, "member", "login-link", "--org", "nope", "--email", "owner@acme.example")
	h.fail(t, licentia.CodeValidationFailed, "member", "login-link", "--org", "acme")
	h.fail(t, licentia.CodeValidationFailed, "member", "reset")
}

// TestAssistantToken: an access token that acts as the member on the
// administration routes, valid one hour.
func TestAssistantToken(t *testing.T) {
	h := newHarness(t)
	h.org(t, "acme", "indie")
	got := h.ok(t, "assistant", "token", "--org", "acme", "--email", "owner@acme.example")
	token, _ := got["access_token"].(string)
	if !regexp.MustCompile(`^licentia_oat_[0-9A-Za-z]{43}$`).MatchString(token) {
		t.Fatalf("access_token = %q", token)
	}
	st := h.openStore(t)
	c, err := auth.NewAuthenticator(st, clock.System{}).Authenticate(t.Context(), "Bearer "+token)
	if err != nil || c.Role != licentia.RoleOwner || !c.Assistant || c.HasScope(licentia.ScopeProductsWrite) || !c.HasScope(licentia.ScopeMembersWrite) {
		t.Errorf("Authenticate() = %+v, %v; want the owner as an assistant, without products:write", c, err)
	}
	h.fail(t, licentia.CodeMemberNotFound, "assistant", "token", "--org", "acme", "--email", "nobody@acme.example")
}

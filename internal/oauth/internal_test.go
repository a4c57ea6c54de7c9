package oauth

import (
	"strings"
	"testing"

	"github.com/licentia/licentia/internal/licentia"
)

// TestVerifierMatches holds the check to RFC 7636's example (appendix B)
// and the verifier's length and alphabet (section 4.1).
func TestVerifierMatches(t *testing.T) {
	const verifier, challenge = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	if !isChallenge(challenge) {
		t.Errorf("isChallenge(%q) = false, want true", challenge)
	}
	for _, tt := range []struct {
		verifier, challenge string
		want                bool
	}{
		{verifier, challenge, true},
		{verifier, strings.ToLower(challenge), false},
		{verifier + "x", challenge, false},
		{verifier[:42], challenge, false},
		{challenge, challenge, false},
		{strings.Repeat("a", 129), challenge, false},
		{verifier[:42] + "+", challenge, false},
		{"", "", false},
	} {
		if got := verifierMatches(tt.verifier, tt.challenge); got != tt.want {
			t.Errorf("verifierMatches(%q, %q) = %v, want %v", tt.verifier, tt.challenge, got, tt.want)
		}
	}
}

// TestCheckRedirectURI: https anywhere, http only on a loopback host with
// any port; never a fragment, a user name or an unparsable host.
func TestCheckRedirectURI(t *testing.T) {
	for _, ok := range []string{
		"https://claude.ai/api/mcp/auth_callback", "https://app.example:8443/cb?x=1", "https://192.0.2.1/cb",
		"http://127.0.0.1/cb", "http://127.0.0.1:65535/cb", "http://[::1]:8080/", "http://localhost:3000/oauth/callback",
		"HTTPS://APP.EXAMPLE/cb",
	} {
		if p := checkRedirectURI(ok); p != "" {
			t.Errorf("checkRedirectURI(%q) = %q, want accepted", ok, p)
		}
	}
	for _, bad := range []string{
		"", "/cb", "cb", "//app.example/cb", "http://app.example/cb", "http://127.0.0.2/cb", "http://localhost.example/cb",
		"http://[::2]/cb", "https://app.example/cb#", "https://app.example/cb#x", "https://u:p@app.example/cb",
		"https:app.example", "https:///cb", "ftp://app.example/cb", "myapp://cb", "https://app.example/c b",
		"https://app.example/\tcb", "https://app.example\\@evil.example", "https://a_b.example/cb", "https://app.example:99999/cb", "https://app.example:/cb", "http://127.0.0.1:0/cb",
		"http://127.0.0.1:port/cb", "https://app.example;x/cb", "https://" + strings.Repeat("a", 2000) + ".example/",
	} {
		if p := checkRedirectURI(bad); p == "" {
			t.Errorf("checkRedirectURI(%q) accepted, want refused", bad)
		}
	}
}

// TestWithQuery: the code or error is added to the registered URI as it
// was written, its own query kept.
func TestWithQuery(t *testing.T) {
	for uri, want := range map[string]string{
		"https://app.example/cb":      "https://app.example/cb?code=c&state=s",
		"https://app.example/cb?x=1":  "https://app.example/cb?x=1&code=c&state=s",
		"https://app.example/cb?":     "https://app.example/cb?code=c&state=s",
		"http://[::1]:9/cb?a=%2F&b=2": "http://[::1]:9/cb?a=%2F&b=2&code=c&state=s",
	} {
		if got := withQuery(uri, map[string][]string{"code": {"c"}, "state": {"s"}}); got != want {
			t.Errorf("withQuery(%q) = %q, want %q", uri, got, want)
		}
	}
}

// FuzzRedirectURI: whatever a client registers, an accepted redirect URI
// is https or loopback http, has no fragment, and its form-action source
// holds nothing that could add to the consent page's policy.
func FuzzRedirectURI(f *testing.F) {
	for _, s := range []string{"https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:33418/callback", "http://[::1]:9/",
		"https://app.example;x/cb", "https://a b", "http://localhost#x", "javascript:alert(1)", "https://[::1%25eth0]/cb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if checkRedirectURI(raw) != "" {
			return
		}
		req := &licentia.AuthorizationRequest{RedirectURI: raw}
		src := req.FormActionSource()
		if strings.ContainsAny(src, " ;,'\"\t\r\n") {
			t.Errorf("FormActionSource(%q) = %q, holds a policy delimiter", raw, src)
		}
		lower := strings.ToLower(raw)
		if !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://") {
			t.Errorf("accepted %q, neither https nor http", raw)
		}
		if strings.Contains(raw, "#") {
			t.Errorf("accepted %q, with a fragment", raw)
		}
	})
}

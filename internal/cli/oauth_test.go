package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestServeAuthorizationServer: serve answers the metadata at the
// well-known addresses with LICENTIA_BASE_URL as issuer, registers
// clients, and sends an authorization request to the console's sign-in.
func TestServeAuthorizationServer(t *testing.T) {
	const public = "https://licences.example.com"
	h := newHarness(t)
	h.vars["LICENTIA_BASE_URL"] = public
	_, base := h.serve(t, io.Discard)
	get := func(path string) (int, map[string]any) {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		json.NewDecoder(res.Body).Decode(&m)
		return res.StatusCode, m
	}
	if status, m := get("/.well-known/oauth-authorization-server"); status != http.StatusOK || m["issuer"] != public ||
		m["authorization_endpoint"] != public+"/oauth/authorize" {
		t.Errorf("authorization server metadata: %d %v, want issuer %s", status, m, public)
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		if status, m := get(p); status != http.StatusOK || m["resource"] != public+"/mcp" {
			t.Errorf("GET %s: %d %v, want resource %s/mcp", p, status, m, public)
		}
	}

	res, err := http.Post(base+"/oauth/register", "application/json",
		strings.NewReader(`{"client_name":"Claude Code","redirect_uris":["http://localhost:5555/callback"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	json.NewDecoder(res.Body).Decode(&reg)
	res.Body.Close()
	id, _ := reg["client_id"].(string)
	if res.StatusCode != http.StatusCreated || id == "" {
		t.Fatalf("register: %d %v", res.StatusCode, reg)
	}

	q := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {"http://localhost:5555/callback"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}, "state": {"s"}}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = noFollow.Get(base + "/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/console/sign-in?next=%2Foauth%2Fauthorize") {
		t.Errorf("authorize: %d to %q, want 303 to the console's sign-in", res.StatusCode, loc)
	}
	res, err = http.Post(base+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader("grant_type=refresh_token&client_id="+id+"&refresh_token=x"))
	if err != nil {
		t.Fatal(err)
	}
	var tok map[string]any
	json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || tok["error"] != "invalid_grant" {
		t.Errorf("token: %d %v, want 400 invalid_grant", res.StatusCode, tok)
	}
}

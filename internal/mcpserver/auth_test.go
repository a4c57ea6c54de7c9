package mcpserver_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/licentia"
	"github.com/licentia/licentia/internal/mcpserver"
)

// wantUnauthorized checks a 401 from /mcp: the challenge that starts an
// OAuth client's discovery, and the API's error object.
func wantUnauthorized(t *testing.T, what string, a apiAnswer) {
	t.Helper()
	if a.status != http.StatusUnauthorized {
		t.Fatalf("%s: status %d %s, want 401", what, a.status, a.body)
	}
	if got := a.header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != metadataChallenge {
		t.Errorf("%s: WWW-Authenticate %q, want %q", what, got, metadataChallenge)
	}
	want := map[string]any{"error": map[string]any{"code": "unauthorized", "message": "A valid API key or access token is required."}}
	if diff := cmp.Diff(want, withoutRequestID(t, a.body)); diff != "" {
		t.Errorf("%s: body (-want +got):\n%s", what, diff)
	}
	if id := a.header.Get("X-Request-Id"); id == "" || !strings.Contains(string(a.body), id) {
		t.Errorf("%s: X-Request-Id %q not in the body %s", what, id, a.body)
	}
	if a.header.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: Cache-Control %q", what, a.header.Get("Cache-Control"))
	}
}

// TestUnauthorized: without a credential, or with one that is not a live
// key or token, /mcp answers 401 with the WWW-Authenticate challenge
// naming the protected resource metadata, before the protocol is looked
// at; the SDK's client cannot connect.
func TestUnauthorized(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		tok := e.token(t, "owner@acme.example")
		key := e.key(t, licentia.ScopeLicencesRead)
		for _, tt := range []struct{ name, authorization string }{
			{"no credential", ""},
			{"not bearer", "Basic b3duZXI6c2VjcmV0"},
			{"empty bearer", "Bearer "},
			{"garbage", "Bearer nonsense"},
			{"unknown token", "Bearer licentia_oat_" + strings.Repeat("A", 43)},
			{"a token changed", "Bearer " + changeLast(tok)},
			{"an unknown key", "Bearer " + changeLast(key)},
		} {
			t.Run(tt.name, func(t *testing.T) {
				wantUnauthorized(t, tt.name, e.post(t, tt.authorization, initialize))
				if _, err := e.connect(t, strings.TrimPrefix(tt.authorization, "Bearer ")); err == nil {
					t.Errorf("Connect() with %s error = nil", tt.name)
				}
			})
		}

		// Two Authorization headers are refused as none, as on the API.
		req, _ := http.NewRequestWithContext(t.Context(), "POST", e.srv.URL+mcpserver.Path, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Add("Authorization", "Bearer "+tok)
		req.Header.Add("Authorization", "Bearer "+tok)
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != metadataChallenge {
			t.Errorf("two Authorization headers: %d %q", res.StatusCode, res.Header.Get("WWW-Authenticate"))
		}

		// Any method, before the SDK sees it.
		for _, method := range []string{"GET", "DELETE"} {
			req, _ := http.NewRequestWithContext(t.Context(), method, e.srv.URL+mcpserver.Path, nil)
			res, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != metadataChallenge {
				t.Errorf("%s /mcp without a credential: %d %q", method, res.StatusCode, res.Header.Get("WWW-Authenticate"))
			}
		}

		// Both credentials work until the token expires, an hour on.
		for _, c := range []string{tok, key} {
			if a := e.post(t, "Bearer "+c, initialize); a.status != http.StatusOK {
				t.Errorf("initialize with a live credential: %d %s", a.status, a.body)
			}
		}
		e.clock.Advance(time.Hour)
		wantUnauthorized(t, "an expired token", e.post(t, "Bearer "+tok, initialize))
		if a := e.post(t, "Bearer "+key, initialize); a.status != http.StatusOK {
			t.Errorf("initialize with the key: %d %s", a.status, a.body)
		}

		if strings.Contains(e.logs.String(), tok) || strings.Contains(e.logs.String(), key) {
			t.Error("the log holds a credential")
		}
	})
}

// TestRefusedCredentialsLimited: refused credentials are counted per
// client address against the admin limit, as on the API, so guessing is
// slow; a live credential from the same address is not held back.
func TestRefusedCredentialsLimited(t *testing.T) {
	e := newEnv(t, nil)
	for i := range 300 {
		a := e.post(t, "Bearer nonsense", initialize)
		if a.status != http.StatusUnauthorized {
			t.Fatalf("refused credential %d: %d %s", i+1, a.status, a.body)
		}
		if got, want := a.header.Get("X-RateLimit-Remaining-admin"), strconv.Itoa(299-i); got != want {
			t.Fatalf("refused credential %d: X-RateLimit-Remaining-admin %q, want %s", i+1, got, want)
		}
	}
	a := e.post(t, "Bearer nonsense", initialize)
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After-admin") != "60" {
		t.Fatalf("refused credential 301: %d Retry-After-admin %q %s", a.status, a.header.Get("Retry-After-admin"), a.body)
	}
	if got := withoutRequestID(t, a.body)["error"].(map[string]any)["code"]; got != "rate_limited" {
		t.Errorf("code %v, want rate_limited", got)
	}
	cs := e.session(t, e.token(t, "owner@acme.example"))
	if r := call(t, cs, "get_organization", nil); r.isError {
		t.Errorf("get_organization from the same address = %s", r.text)
	}
	e.clock.Advance(time.Minute)
	wantUnauthorized(t, "a refused credential a minute on", e.post(t, "Bearer nonsense", initialize))
}

// TestRemovedMemberRefused: a member removed from the team loses their
// assistant at once, on the session already open, and a member's role is
// read at each request.
func TestRemovedMemberRefused(t *testing.T) {
	onEngines(t, func(t *testing.T, e *env) {
		id, tok := e.member(t, "admin@acme.example", licentia.RoleAdmin)
		cs := e.session(t, tok)
		if r := call(t, cs, "get_organization", nil); r.isError {
			t.Fatalf("get_organization = %s", r.text)
		}
		owner := e.session(t, e.token(t, "owner@acme.example"))
		if r := call(t, owner, "remove_member", map[string]any{"id": id}); r.isError {
			t.Fatalf("remove_member = %s", r.text)
		}
		if _, err := callErr(t, cs, "get_organization", nil); err == nil {
			t.Error("a removed member's session still calls tools")
		}
		wantUnauthorized(t, "a removed member's token", e.post(t, "Bearer "+tok, initialize))
		if a := e.api(t, "GET", "/v1/admin/organization", tok, nil); a.status != http.StatusUnauthorized {
			t.Errorf("a removed member's token on the API: %d", a.status)
		}
	})
}

// changeLast returns s with its last character replaced by another one.
func changeLast(s string) string {
	c := byte('x')
	if s[len(s)-1] == c {
		c = 'y'
	}
	return s[:len(s)-1] + string(c)
}

package integration

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/licentia/licentia/sdk"
)

// TestRevocationSeenAtOnceAcrossProcesses: a machine checks its status on
// one serve process until that process has its key verified and its verdict
// kept (the caches a status check may use); the licence is revoked through
// another process; the very next status check on the first answers a verdict
// of a revoked licence, signed anew, with no wait.
func TestRevocationSeenAtOnceAcrossProcesses(t *testing.T) {
	s := newService(t)
	proxy := map[string]string{"LICENTIA_TRUSTED_PROXIES": "127.0.0.1/32"}
	admin, checks := s.start(t, "admin", proxy), s.start(t, "checks", proxy)
	waitReady(t, admin, checks)
	key := s.newOrg(t, "acme")
	p := createProduct(t, admin, key, "studio", "STU")
	pub, err := sdk.ParsePublicKey(fmt.Sprint(p["public_key"]))
	if err != nil {
		t.Fatalf("product public key: %v", err)
	}
	product := sdk.Product{ID: "studio", VerdictDomain: fmt.Sprint(p["verdict_signing_domain"]), PublicKeys: []ed25519.PublicKey{pub}}
	licenceID, licenceKey := issueLicence(t, admin, key, "studio", "ada@example.net")
	seat := map[string]any{"licence_key": licenceKey, "machine_id": "ada-laptop"}
	addr := 0
	from := func() []string { addr++; return []string{"X-Forwarded-For", fmt.Sprintf("198.51.100.%d", addr)} }
	eventually(t, "activation on "+checks.name, 5*time.Second, 100*time.Millisecond, func() bool {
		body := map[string]any{"licence_key": licenceKey, "machine_id": "ada-laptop", "label": "Laptop", "os": "linux", "app_version": "1.0.0"}
		return checks.call(t, "POST", "/v1/activations", "", body, from()...).status == http.StatusCreated
	})
	state := func() (string, string) {
		t.Helper()
		a := checks.call(t, "POST", "/v1/activations/status", "", seat, from()...)
		if a.status != http.StatusOK {
			t.Fatalf("status check: %d %v", a.status, a.body)
		}
		raw := fmt.Sprint(a.body["verdict"])
		v, err := sdk.VerifyVerdict(raw, product)
		if err != nil {
			t.Fatalf("status check: verdict %q: %v", raw, err)
		}
		return v.State, raw
	}
	var kept string
	for range 3 {
		st, raw := state()
		if st != sdk.StateActive {
			t.Fatalf("before the revocation: state %s, want active", st)
		}
		kept = raw
	}
	admin.must(t, http.StatusOK, "POST", "/v1/admin/licences/"+licenceID+"/revoke", key, map[string]any{"reason": "refund"})
	if st, raw := state(); st != sdk.StateRevoked || raw == kept {
		t.Errorf("the first status check after the revocation: state %s (verdict reused: %v), want revoked", st, raw == kept)
	}
}

package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// propagation is the contract's bound for another process to see a rotation
// or a retirement.
const propagation = 30 * time.Second

// A public key retired on one process stops verifying on another within
// 30 seconds: a licence key signed with it then answers 422
// licence_key_invalid there.
func TestRetirementSeenByOtherProcess(t *testing.T) {
	s := newService(t)
	s.useRedis(t)
	// The public limit is 30 a minute per address and route; each
	// activation below comes from an address of its own, forwarded by the
	// test as a trusted proxy.
	proxy := map[string]string{"LICENTIA_TRUSTED_PROXIES": "127.0.0.1/32"}
	a, b := s.start(t, "a", proxy), s.start(t, "b", proxy)
	waitReady(t, a, b)
	key := s.newOrg(t, "acme")

	createProduct(t, a, key, "photo-editor", "PHOTO")
	id, licenceKey := issueLicence(t, a, key, "photo-editor", "buyer@example.net")
	// The key read back before the rotation is the one signed with the key
	// about to become previous.
	if got, _ := a.must(t, http.StatusOK, "GET", "/v1/admin/licences/"+id, key, nil).body["licence_key"].(string); got != licenceKey {
		t.Fatalf("GET /v1/admin/licences/%s: licence_key %q, want the issued %q", id, got, licenceKey)
	}

	machines := 0
	activate := func(p *process) answer {
		machines++
		return p.call(t, "POST", "/v1/activations", "", map[string]any{
			"licence_key": licenceKey, "machine_id": fmt.Sprintf("machine-%03d", machines),
			"label": "Workstation", "os": "linux", "app_version": "1.0.0",
		}, "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", machines))
	}
	// B finds a product created on A a moment ago.
	eventually(t, "activation on b with the new product's key", 5*time.Second, 100*time.Millisecond, func() bool {
		ans := activate(b)
		if ans.status != http.StatusCreated && ans.code() != "licence_key_invalid" {
			t.Fatalf("POST /v1/activations on b: status %d %v, want 201", ans.status, ans.body)
		}
		return ans.status == http.StatusCreated
	})

	rotated := a.must(t, http.StatusOK, "POST", "/v1/admin/products/photo-editor/rotate-signing-key", key,
		map[string]any{"keep_previous": true}).object("product")
	previous, _ := rotated["previous_public_keys"].([]any)
	if len(previous) != 1 {
		t.Fatalf("rotate-signing-key: previous_public_keys = %v, want one key", rotated["previous_public_keys"])
	}
	for _, p := range []*process{a, b} {
		if ans := activate(p); ans.status != http.StatusCreated {
			t.Fatalf("POST /v1/activations on %s with a previous key's licence key: status %d %v, want 201", p.name, ans.status, ans.body)
		}
	}

	a.must(t, http.StatusOK, "POST", "/v1/admin/products/photo-editor/retire-public-key", key,
		map[string]any{"public_key": previous[0]})
	retired := time.Now()
	// The process that retired the key refuses it at once.
	if ans := activate(a); ans.status != http.StatusUnprocessableEntity || ans.code() != "licence_key_invalid" {
		t.Fatalf("POST /v1/activations on a after the retirement: status %d %v, want 422 licence_key_invalid", ans.status, ans.body)
	}
	polls := 0
	eventually(t, "b refusing the retired key", propagation+5*time.Second, 500*time.Millisecond, func() bool {
		polls++
		ans := activate(b)
		switch {
		case ans.status == http.StatusUnprocessableEntity && ans.code() == "licence_key_invalid":
			return true
		case ans.status != http.StatusCreated:
			t.Fatalf("POST /v1/activations on b after the retirement: status %d %v, want 201 or 422 licence_key_invalid", ans.status, ans.body)
		}
		return false
	})
	took := time.Since(retired)
	t.Logf("retirement on a seen by b after %v (%d polls)", took.Round(time.Millisecond), polls)
	if took > propagation {
		t.Errorf("retirement seen by b after %v, want at most %v", took, propagation)
	}
}

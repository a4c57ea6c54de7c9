package integration

import (
	"net/http"
	"net/url"
	"testing"
)

// With PostgreSQL frozen under a running process (a network partition: no
// byte passes, no connection is reset), requests answer 500 and /readyz 503
// once LICENTIA_DATABASE_TIMEOUT passes, instead of hanging as long as the
// freeze; once it thaws, the process serves again.
func TestDatabaseFrozen(t *testing.T) {
	s := newService(t)
	u, err := url.Parse(s.env["LICENTIA_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFreezingProxy(t, u.Host)
	u.Host = proxy.addr()
	s.env["LICENTIA_DATABASE_URL"] = u.String()
	p := s.start(t, "a", map[string]string{"LICENTIA_DATABASE_TIMEOUT": "300ms"})
	waitReady(t, p)
	key := s.newOrg(t, "acme")
	p.must(t, http.StatusOK, "GET", "/v1/admin/organization", key, nil)

	proxy.freeze()
	// client gives up only far above the timeout: an answer is what counts.
	for range 3 {
		if a := p.call(t, "GET", "/v1/admin/organization", key, nil); a.status != http.StatusInternalServerError || a.code() != "internal_error" {
			t.Errorf("GET /v1/admin/organization with the database frozen: status %d %v, want 500 internal_error", a.status, a.body)
		}
		if a := p.call(t, "GET", "/readyz", "", nil); a.status != http.StatusServiceUnavailable || a.code() != "service_unavailable" {
			t.Errorf("GET /readyz with the database frozen: status %d %v, want 503 service_unavailable", a.status, a.body)
		}
	}

	proxy.thaw()
	p.waitFor(t, "/readyz")
	p.must(t, http.StatusOK, "GET", "/v1/admin/organization", key, nil)
}

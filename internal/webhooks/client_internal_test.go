package webhooks

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// switchResolver answers every host with addresses that a test may change,
// and counts look-ups.
type switchResolver struct {
	mu    sync.Mutex
	addrs []netip.Addr
	calls int
}

func (r *switchResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	return r.addrs, nil
}

func (r *switchResolver) set(addrs []netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addrs = addrs
}

func (r *switchResolver) lookups() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// keptClient is a delivery client whose dialer resolves through r and, in
// place of the network, connects every checked address to srv; it records
// the addresses dialed.
func keptClient(t *testing.T, srv *httptest.Server, r Resolver) (*http.Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var dialed []string
	d := &Dialer{Resolver: r, dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, address)
		mu.Unlock()
		var nd net.Dialer
		return nd.DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return NewHTTPClient(d, roots, "https://licences.example.net"), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), dialed...)
	}
}

// postAndDrain sends a request and reads its short answer to the end, as
// the worker does, so that the connection can be kept.
func postAndDrain(t *testing.T, c *http.Client, url string) (int, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestClientKeepsCheckedConnections: attempts to one host share a
// connection, which stays with the address checked when it was dialed;
// every attempt still resolves the host again, and one to a host that now
// resolves to a non-public address is refused, without a byte sent over
// the connection still open to its old address.
func TestClientKeepsCheckedConnections(t *testing.T) {
	var mu sync.Mutex
	conns, requests := 0, 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	counts := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return conns, requests
	}
	r := &switchResolver{addrs: addrs("8.8.8.8")}
	c, dialed := keptClient(t, srv, r)
	const url = "https://hooks.example.com/x"

	for i := range 3 {
		if status, err := postAndDrain(t, c, url); err != nil || status != http.StatusOK {
			t.Fatalf("POST %d = %d, %v; want 200", i+1, status, err)
		}
	}
	if c, n := counts(); c != 1 || n != 3 {
		t.Errorf("receiver saw %d connections for %d requests, want 1 for 3", c, n)
	}
	// A look-up per attempt, and one more for the one dial.
	if n := r.lookups(); n != 4 {
		t.Errorf("look-ups = %d, want 4", n)
	}

	r.set(addrs("8.8.8.8", "10.0.0.1"))
	if status, err := postAndDrain(t, c, url); !errors.Is(err, ErrAddressRefused) {
		t.Errorf("POST once the host resolves to a private address = %d, %v; want %v", status, err, ErrAddressRefused)
	}
	if _, n := counts(); n != 3 {
		t.Errorf("receiver saw %d requests, want still 3", n)
	}

	// A new public answer does not move the open connection: it goes on to
	// the address checked when it was dialed.
	r.set(addrs("1.1.1.1"))
	if status, err := postAndDrain(t, c, url); err != nil || status != http.StatusOK {
		t.Fatalf("POST after the host moved = %d, %v; want 200", status, err)
	}
	if diff := cmp.Diff([]string{"8.8.8.8:443"}, dialed()); diff != "" {
		t.Errorf("addresses dialed mismatch (-want +got):\n%s", diff)
	}
}

package webhooks_test

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/licentia/licentia/internal/webhooks"
)

// fakeResolver answers from a table and counts look-ups; a host missing from
// the table is an error, so a look-up that should not happen fails the dial.
type fakeResolver struct {
	hosts map[string][]string
	calls atomic.Int32
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.calls.Add(1)
	addrs, ok := r.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// listen returns a loopback listener and its port.
func listen(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return ln, port
}

// assertNoEarlierConnection fails unless the first connection ln accepts is
// one the test makes now, which shows that nothing connected before.
func assertNoEarlierConnection(t *testing.T, ln net.Listener) {
	t.Helper()
	probe, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	got, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.RemoteAddr().String() != probe.LocalAddr().String() {
		t.Errorf("listener accepted a connection from %s before the probe from %s", got.RemoteAddr(), probe.LocalAddr())
	}
}

func TestDialerRefusesNonPublic(t *testing.T) {
	for _, tt := range []struct {
		name    string
		addrs   []string
		refused string
	}{
		{"loopback", []string{"127.0.0.1"}, "127.0.0.1"},
		{"mapped loopback", []string{"::ffff:127.0.0.1"}, "::ffff:127.0.0.1"},
		{"IPv6 loopback", []string{"::1"}, "::1"},
		{"private", []string{"10.0.0.1"}, "10.0.0.1"},
		{"metadata", []string{"169.254.169.254"}, "169.254.169.254"},
		{"public then loopback", []string{"8.8.8.8", "127.0.0.1"}, "127.0.0.1"},
		{"public then private", []string{"1.1.1.1", "2606:4700:4700::1111", "192.168.0.1"}, "192.168.0.1"},
		{"private then public", []string{"fd00::1", "8.8.8.8"}, "fd00::1"},
		{"NAT64 of public", []string{"64:ff9b::808:808"}, "64:ff9b::808:808"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ln, port := listen(t)
			r := &fakeResolver{hosts: map[string][]string{"hooks.example.com": tt.addrs}}
			d := &webhooks.Dialer{Resolver: r}
			conn, err := d.DialContext(t.Context(), "tcp", net.JoinHostPort("hooks.example.com", port))
			if err == nil {
				conn.Close()
				t.Fatalf("DialContext() error = nil, want %v", webhooks.ErrAddressRefused)
			}
			if !errors.Is(err, webhooks.ErrAddressRefused) {
				t.Fatalf("DialContext() error = %v, want %v", err, webhooks.ErrAddressRefused)
			}
			refused, ok := errors.AsType[*webhooks.AddressRefusedError](err)
			if !ok || refused.Addr != netip.MustParseAddr(tt.refused) || refused.Host != "hooks.example.com" {
				t.Errorf("DialContext() error = %#v, want hooks.example.com refused for %s", err, tt.refused)
			}
			if n := r.calls.Load(); n != 1 {
				t.Errorf("look-ups = %d, want 1", n)
			}
			assertNoEarlierConnection(t, ln)
		})
	}
}

func TestDialerRefusesAddressLiterals(t *testing.T) {
	ln, port := listen(t)
	r := &fakeResolver{}
	d := &webhooks.Dialer{Resolver: r}
	for _, host := range []string{"127.0.0.1", "::1", "::ffff:127.0.0.1", "0.0.0.0"} {
		conn, err := d.DialContext(t.Context(), "tcp", net.JoinHostPort(host, port))
		if err == nil {
			conn.Close()
		}
		if !errors.Is(err, webhooks.ErrAddressRefused) {
			t.Errorf("DialContext(%s) error = %v, want %v", host, err, webhooks.ErrAddressRefused)
		}
	}
	if n := r.calls.Load(); n != 0 {
		t.Errorf("look-ups = %d, want 0 for address literals", n)
	}
	assertNoEarlierConnection(t, ln)
}

func TestDialerErrors(t *testing.T) {
	d := &webhooks.Dialer{Resolver: &fakeResolver{hosts: map[string][]string{"empty.example.com": {}}}}
	for _, tt := range []struct{ network, addr string }{
		{"udp", "hooks.example.com:443"},
		{"unix", "/tmp/socket"},
		{"tcp", "hooks.example.com"},
		{"tcp", "missing.example.com:443"},
		{"tcp", "empty.example.com:443"},
	} {
		conn, err := d.DialContext(t.Context(), tt.network, tt.addr)
		if err == nil {
			conn.Close()
			t.Errorf("DialContext(%s, %s) error = nil, want an error", tt.network, tt.addr)
			continue
		}
		if errors.Is(err, webhooks.ErrAddressRefused) {
			t.Errorf("DialContext(%s, %s) error = %v, want an error other than refusal", tt.network, tt.addr, err)
		}
	}
}

func TestDialerPins(t *testing.T) {
	ln, port := listen(t)
	pins, err := webhooks.ParsePins([]string{"hooks.example.com:443:" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	r := &fakeResolver{hosts: map[string][]string{"other.example.com": {"127.0.0.1"}}}
	d := &webhooks.Dialer{Resolver: r, Pins: pins}

	// The pinned name connects straight to its loopback target, unchecked
	// and without a look-up, whatever case it is written in.
	for _, host := range []string{"hooks.example.com", "HOOKS.Example.com."} {
		conn, err := d.DialContext(t.Context(), "tcp", net.JoinHostPort(host, "443"))
		if err != nil {
			t.Fatalf("DialContext(pinned %s) error = %v", host, err)
		}
		got, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if got.RemoteAddr().String() != conn.LocalAddr().String() {
			t.Errorf("listener accepted %s, want the dialer's %s", got.RemoteAddr(), conn.LocalAddr())
		}
		got.Close()
		conn.Close()
	}
	if n := r.calls.Load(); n != 0 {
		t.Errorf("look-ups = %d, want 0 for a pinned host", n)
	}

	// Only the pinned name skips the check: another name on the same
	// address is refused, and so is the pinned name on another port.
	for _, addr := range []string{
		net.JoinHostPort("other.example.com", port),
		net.JoinHostPort("127.0.0.1", port),
	} {
		conn, err := d.DialContext(t.Context(), "tcp", addr)
		if err == nil {
			conn.Close()
		}
		if !errors.Is(err, webhooks.ErrAddressRefused) {
			t.Errorf("DialContext(%s) error = %v, want %v", addr, err, webhooks.ErrAddressRefused)
		}
	}
	if conn, err := d.DialContext(t.Context(), "tcp", net.JoinHostPort("hooks.example.com", port)); err == nil {
		conn.Close()
		t.Errorf("DialContext(pinned name on port %s) error = nil, want the pin not to apply", port)
	}
	assertNoEarlierConnection(t, ln)
}

func TestParsePins(t *testing.T) {
	got, err := webhooks.ParsePins([]string{
		"hooks.example.com:443:127.0.0.1:8443",
		" HOOKS2.Example.COM.:443:[::1]:9443 ",
		"[::1]:443:[::1]:9444",
		"10.0.0.1:443:127.0.0.1:1",
	})
	if err != nil {
		t.Fatalf("ParsePins() error = %v", err)
	}
	want := map[string]string{
		"hooks.example.com":  "127.0.0.1:8443",
		"hooks2.example.com": "[::1]:9443",
		"::1":                "[::1]:9444",
		"10.0.0.1":           "127.0.0.1:1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParsePins() mismatch (-want +got):\n%s", diff)
	}
	if got, err := webhooks.ParsePins(nil); err != nil || len(got) != 0 {
		t.Errorf("ParsePins(nil) = %v, %v, want no pins", got, err)
	}

	for _, tt := range []struct{ name, entry, want string }{
		{"empty", "", "want host:443:addr:port"},
		{"host only", "hooks.example.com", "want host:443:addr:port"},
		{"no target", "hooks.example.com:443", "want host:443:addr:port"},
		{"no target port", "hooks.example.com:443:127.0.0.1", "is not an IP address and port"},
		{"empty host", ":443:127.0.0.1:8443", "empty host"},
		{"other source port", "hooks.example.com:8443:127.0.0.1:8443", "only 443 can be pinned"},
		{"empty source port", "hooks.example.com::127.0.0.1:8443", "only 443 can be pinned"},
		{"name as target", "hooks.example.com:443:localhost:8443", "is not an IP address"},
		{"IPv6 target without brackets", "hooks.example.com:443:::1:8443", "is not an IP address"},
		{"target port zero", "hooks.example.com:443:127.0.0.1:0", "is not an IP address and port"},
		{"target port too big", "hooks.example.com:443:127.0.0.1:65536", "is not an IP address and port"},
		{"unclosed bracket", "[::1:443:127.0.0.1:8443", "unclosed ["},
		{"bracket without colon", "[::1]443:127.0.0.1:8443", "want host:443:addr:port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhooks.ParsePins([]string{tt.entry})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParsePins(%q) = %v, %v, want an error containing %q", tt.entry, got, err, tt.want)
			}
		})
	}

	// Every bad entry is reported, and a host pinned twice is one of them.
	_, err = webhooks.ParsePins([]string{
		"a.example.com:443:127.0.0.1:1",
		"b.example.com:80:127.0.0.1:1",
		"A.example.com:443:127.0.0.1:2",
	})
	if err == nil || !strings.Contains(err.Error(), "b.example.com:80") || !strings.Contains(err.Error(), "pinned twice") {
		t.Errorf("ParsePins(two bad entries) error = %v, want both reported", err)
	}
}

// receiver is a TLS receiver on loopback whose certificate covers
// *.example.com; it records what reached it.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	agents []string
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.paths = append(rc.paths, r.URL.Path)
		rc.agents = append(rc.agents, r.UserAgent())
		rc.mu.Unlock()
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "https://hooks.example.com/target", http.StatusFound)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(rc.Close)
	return rc
}

// pinnedDialer pins hooks.example.com to the receiver.
func (rc *receiver) pinnedDialer(t *testing.T) *webhooks.Dialer {
	t.Helper()
	pins, err := webhooks.ParsePins([]string{"hooks.example.com:443:" + rc.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	return &webhooks.Dialer{Resolver: &fakeResolver{}, Pins: pins}
}

// writeCA writes the receiver's certificate as PEM and loads it with LoadCAFile.
func (rc *receiver) writeCA(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.Certificate().Raw})
	if err := os.WriteFile(path, block, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// post sends one delivery-like request and returns its status.
func post(t *testing.T, c *http.Client, url string) (int, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestHTTPClientTrustsExtraRoot(t *testing.T) {
	rc := newReceiver(t)
	roots, err := webhooks.LoadCAFile(rc.writeCA(t))
	if err != nil {
		t.Fatalf("LoadCAFile() error = %v", err)
	}

	untrusting := webhooks.NewHTTPClient(rc.pinnedDialer(t), nil, "https://licences.example.net")
	if status, err := post(t, untrusting, "https://hooks.example.com/x"); !isUnknownAuthority(err) {
		t.Errorf("POST without the extra root = %d, %v, want a certificate error", status, err)
	}

	c := webhooks.NewHTTPClient(rc.pinnedDialer(t), roots, "https://licences.example.net")
	status, err := post(t, c, "https://hooks.example.com/x")
	if err != nil || status != http.StatusOK {
		t.Fatalf("POST with the extra root = %d, %v, want 200", status, err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if diff := cmp.Diff([]string{"Licentia-Webhooks/1.0 (https://licences.example.net)"}, rc.agents); diff != "" {
		t.Errorf("User-Agent mismatch (-want +got):\n%s", diff)
	}
}

func isUnknownAuthority(err error) bool {
	_, ok := errors.AsType[*tls.CertificateVerificationError](err)
	return ok
}

func TestHTTPClientDoesNotFollowRedirects(t *testing.T) {
	rc := newReceiver(t)
	roots, err := webhooks.LoadCAFile(rc.writeCA(t))
	if err != nil {
		t.Fatal(err)
	}
	c := webhooks.NewHTTPClient(rc.pinnedDialer(t), roots, "https://licences.example.net")
	status, err := post(t, c, "https://hooks.example.com/redirect")
	if err != nil || status != http.StatusFound {
		t.Fatalf("POST /redirect = %d, %v, want the 302 itself", status, err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if diff := cmp.Diff([]string{"/redirect"}, rc.paths); diff != "" {
		t.Errorf("paths reached mismatch (-want +got):\n%s", diff)
	}
}

func TestHTTPClientIgnoresProxyEnvironment(t *testing.T) {
	rc := newReceiver(t)
	ln, _ := listen(t)
	t.Setenv("HTTPS_PROXY", "http://"+ln.Addr().String())
	t.Setenv("https_proxy", "http://"+ln.Addr().String())
	roots, err := webhooks.LoadCAFile(rc.writeCA(t))
	if err != nil {
		t.Fatal(err)
	}
	c := webhooks.NewHTTPClient(rc.pinnedDialer(t), roots, "https://licences.example.net")
	if status, err := post(t, c, "https://hooks.example.com/x"); err != nil || status != http.StatusOK {
		t.Fatalf("POST = %d, %v, want 200 straight from the receiver", status, err)
	}
	assertNoEarlierConnection(t, ln)
}

func TestHTTPClientRefuses(t *testing.T) {
	rc := newReceiver(t)
	roots, err := webhooks.LoadCAFile(rc.writeCA(t))
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(rc.Listener.Addr().String())
	d := &webhooks.Dialer{Resolver: &fakeResolver{hosts: map[string][]string{
		"private.example.com":  {"8.8.8.8", "10.0.0.1"},
		"loopback.example.com": {"127.0.0.1"},
	}}}
	c := webhooks.NewHTTPClient(d, roots, "https://licences.example.net")
	for _, url := range []string{
		"https://private.example.com/x",
		fmt.Sprintf("https://loopback.example.com:%s/x", port),
		fmt.Sprintf("https://127.0.0.1:%s/x", port),
	} {
		if status, err := post(t, c, url); !errors.Is(err, webhooks.ErrAddressRefused) {
			t.Errorf("POST %s = %d, %v, want %v", url, status, err, webhooks.ErrAddressRefused)
		}
	}
	if status, err := post(t, c, "http://hooks.example.com/x"); err == nil {
		t.Errorf("POST over http = %d, want an error", status)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.paths) != 0 {
		t.Errorf("receiver reached by %v, want nothing", rc.paths)
	}
}

func TestLoadCAFileErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.pem"), empty} {
		if _, err := webhooks.LoadCAFile(path); err == nil {
			t.Errorf("LoadCAFile(%s) error = nil, want an error", path)
		}
	}
}

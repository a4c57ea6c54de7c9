package webhooks

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tableResolver answers every host with the same addresses and counts look-ups.
type tableResolver struct {
	addrs []netip.Addr
	calls int
}

func (r *tableResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.calls++
	return r.addrs, nil
}

// recordingDial records the addresses dialed and fails all but succeedAt.
func recordingDial(dialed *[]string, succeedAt int) func(context.Context, string, string) (net.Conn, error) {
	return func(_ context.Context, _, address string) (net.Conn, error) {
		*dialed = append(*dialed, address)
		if len(*dialed)-1 != succeedAt {
			return nil, errors.New("connection refused")
		}
		c, other := net.Pipe()
		other.Close()
		return c, nil
	}
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestDialerTriesCheckedAddressesInOrder(t *testing.T) {
	r := &tableResolver{addrs: addrs("8.8.8.8", "::ffff:1.1.1.1", "2606:4700:4700::1111")}
	var dialed []string
	d := &Dialer{Resolver: r, dial: recordingDial(&dialed, 2)}
	conn, err := d.DialContext(t.Context(), "tcp", "hooks.example.com:443")
	if err != nil {
		t.Fatalf("DialContext() error = %v", err)
	}
	conn.Close()
	// A mapped address is dialed as the IPv4 address it carries.
	want := []string{"8.8.8.8:443", "1.1.1.1:443", "[2606:4700:4700::1111]:443"}
	if diff := cmp.Diff(want, dialed); diff != "" {
		t.Errorf("addresses dialed mismatch (-want +got):\n%s", diff)
	}
	if r.calls != 1 {
		t.Errorf("look-ups = %d, want 1", r.calls)
	}
}

func TestDialerReportsEveryFailure(t *testing.T) {
	r := &tableResolver{addrs: addrs("8.8.8.8", "1.1.1.1")}
	var dialed []string
	d := &Dialer{Resolver: r, dial: recordingDial(&dialed, -1)}
	if _, err := d.DialContext(t.Context(), "tcp4", "hooks.example.com:443"); err == nil {
		t.Fatal("DialContext() error = nil, want the connection failures")
	}
	if len(dialed) != 2 || r.calls != 1 {
		t.Errorf("dialed %v after %d look-ups, want both addresses after 1", dialed, r.calls)
	}
}

func TestDialerRefusesBeforeConnecting(t *testing.T) {
	for _, resolved := range [][]netip.Addr{
		addrs("10.0.0.1"),
		addrs("8.8.8.8", "10.0.0.1"),
		addrs("2606:4700:4700::1111", "1.1.1.1", "::1"),
		addrs("8.8.8.8", "::ffff:192.168.1.1"),
		{netip.Addr{}},
	} {
		var dialed []string
		d := &Dialer{Resolver: &tableResolver{addrs: resolved}, dial: recordingDial(&dialed, 0)}
		_, err := d.DialContext(t.Context(), "tcp", "hooks.example.com:443")
		if !errors.Is(err, ErrAddressRefused) {
			t.Errorf("DialContext(%v) error = %v, want %v", resolved, err, ErrAddressRefused)
		}
		if len(dialed) != 0 {
			t.Errorf("DialContext(%v) dialed %v, want nothing", resolved, dialed)
		}
	}
}

func TestCheckSocket(t *testing.T) {
	for _, tt := range []struct {
		address string
		ok      bool
	}{
		{"8.8.8.8:443", true},
		{"[2606:4700:4700::1111]:443", true},
		{"127.0.0.1:443", false},
		{"[::1]:443", false},
		{"[::ffff:127.0.0.1]:443", false},
		{"10.0.0.1:443", false},
		{"[fe80::1%eth0]:443", false},
		{"not an address", false},
	} {
		err := checkSocket("tcp4", tt.address, nil)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrAddressRefused)) {
			t.Errorf("checkSocket(%s) = %v, want ok %v", tt.address, err, tt.ok)
		}
	}
}

// The second line is wired in: a real dial to a non-public address that
// reaches connect is stopped by the socket check, not by the network.
func TestConnectChecksSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := &Dialer{}
	conn, err := d.connect(t.Context(), "tcp", ln.Addr().String(), true)
	if err == nil {
		conn.Close()
	}
	if !errors.Is(err, ErrAddressRefused) {
		t.Errorf("connect(checked loopback) error = %v, want %v", err, ErrAddressRefused)
	}
	conn, err = d.connect(t.Context(), "tcp", ln.Addr().String(), false)
	if err != nil {
		t.Fatalf("connect(unchecked loopback) error = %v", err)
	}
	conn.Close()
}

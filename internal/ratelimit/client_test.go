package ratelimit_test

import (
	"testing"

	"github.com/licentia/licentia/internal/ratelimit"
)

// TestClientSubject: a limit keyed on a client address counts an IPv4
// address alone and an IPv6 address with the rest of its /64, the network
// one subscriber usually holds whole; an IPv4 address written as IPv6
// counts as the IPv4 address.
func TestClientSubject(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b string
		same bool
	}{
		{"one IPv4 address", "198.51.100.7", "198.51.100.7", true},
		{"two IPv4 addresses", "198.51.100.7", "198.51.100.8", false},
		{"IPv4 addresses of one /24", "198.51.100.7", "198.51.100.200", false},
		{"IPv6 addresses of one /64", "2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", true},
		{"IPv6 written two ways", "2001:db8:1:2::1", "2001:0DB8:0001:0002:0000:0000:0000:0009", true},
		{"IPv6 of neighbouring /64s", "2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"IPv6 with a zone", "fe80::1%eth0", "fe80::2", true},
		{"IPv4-mapped IPv6 and IPv4", "::ffff:198.51.100.7", "198.51.100.7", true},
		{"IPv4-mapped IPv6 of two IPv4 addresses", "::ffff:198.51.100.7", "::ffff:198.51.100.8", false},
		{"IPv4 and an IPv6 /64 holding its bits", "0.0.0.1", "::1", false},
		{"not an address, as it is", "pipe", "pipe", true},
		{"not an address and an address", "pipe", "198.51.100.7", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := ratelimit.ClientSubject(tt.a), ratelimit.ClientSubject(tt.b)
			if (a == b) != tt.same {
				t.Errorf("ClientSubject(%q) = %q, ClientSubject(%q) = %q; same = %v, want %v", tt.a, a, tt.b, b, a == b, tt.same)
			}
		})
	}
	if got, want := ratelimit.ClientSubject("198.51.100.7"), "addr:198.51.100.7"; got != want {
		t.Errorf("ClientSubject(IPv4) = %q, want %q, as limits were keyed before", got, want)
	}
}

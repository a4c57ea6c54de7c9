package webhooks_test

import (
	"net/netip"
	"testing"

	"github.com/licentia/licentia/internal/webhooks"
)

func TestIsPublic(t *testing.T) {
	for _, tt := range []struct {
		name string
		addr string
		want bool
	}{
		{"Google DNS", "8.8.8.8", true},
		{"Cloudflare DNS", "1.1.1.1", true},
		{"Cloudflare DNS IPv6", "2606:4700:4700::1111", true},
		{"Google DNS IPv6", "2001:4860:4860::8888", true},
		{"public IPv4-mapped", "::ffff:8.8.8.8", true},
		{"just outside 100.64/10", "100.128.0.1", true},
		{"just outside 172.16/12", "172.32.0.1", true},
		{"just outside 198.18/15", "198.20.0.1", true},

		{"unspecified IPv4", "0.0.0.0", false},
		{"this network", "0.1.2.3", false},
		{"private 10/8", "10.0.0.1", false},
		{"private 10/8 end", "10.255.255.255", false},
		{"carrier-grade NAT", "100.64.0.1", false},
		{"carrier-grade NAT end", "100.127.255.254", false},
		{"loopback", "127.0.0.1", false},
		{"loopback far", "127.255.0.9", false},
		{"link-local", "169.254.169.254", false},
		{"private 172.16/12", "172.16.0.1", false},
		{"private 172.16/12 end", "172.31.255.255", false},
		{"IETF protocol assignments", "192.0.0.8", false},
		{"TEST-NET-1", "192.0.2.1", false},
		{"6to4 relay anycast", "192.88.99.1", false},
		{"private 192.168/16", "192.168.1.1", false},
		{"benchmarking", "198.18.0.1", false},
		{"benchmarking end", "198.19.255.255", false},
		{"TEST-NET-2", "198.51.100.7", false},
		{"TEST-NET-3", "203.0.113.9", false},
		{"multicast", "224.0.0.1", false},
		{"multicast end", "239.255.255.255", false},
		{"reserved", "240.0.0.1", false},
		{"broadcast", "255.255.255.255", false},

		{"unspecified IPv6", "::", false},
		{"loopback IPv6", "::1", false},
		{"IPv4-compatible", "::8.8.8.8", false},
		{"mapped loopback", "::ffff:127.0.0.1", false},
		{"mapped private", "::ffff:10.0.0.1", false},
		{"mapped link-local", "::ffff:169.254.169.254", false},
		{"mapped carrier-grade NAT", "::ffff:100.64.0.1", false},
		{"mapped unspecified", "::ffff:0.0.0.0", false},
		{"NAT64 loopback", "64:ff9b::7f00:1", false},
		{"NAT64 private", "64:ff9b::10.0.0.1", false},
		{"NAT64 public", "64:ff9b::8.8.8.8", false},
		{"NAT64 local-use", "64:ff9b:1::a00:1", false},
		{"discard-only", "100::1", false},
		{"Teredo", "2001::1", false},
		{"Teredo carrying loopback", "2001:0:4136:e378:8000:63bf:80ff:fffe", false},
		{"IETF special 2001::/23", "2001:2::1", false},
		{"documentation IPv6", "2001:db8::1", false},
		{"documentation IPv6 end", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false},
		{"6to4", "2002:7f00:1::1", false},
		{"6to4 public", "2002:808:808::1", false},
		{"documentation 3fff::/20", "3fff::1", false},
		{"unique local", "fc00::1", false},
		{"unique local fd", "fd12:3456:789a::1", false},
		{"link-local IPv6", "fe80::1", false},
		{"link-local IPv6 with zone", "fe80::1%eth0", false},
		{"public IPv6 with zone", "2606:4700:4700::1111%eth0", false},
		{"site-local", "fec0::1", false},
		{"multicast IPv6", "ff02::1", false},
		{"multicast IPv6 global", "ff0e::1", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := netip.MustParseAddr(tt.addr)
			if got := webhooks.IsPublic(a); got != tt.want {
				t.Errorf("IsPublic(%s) = %v, want %v", a, got, tt.want)
			}
		})
	}
	if webhooks.IsPublic(netip.Addr{}) {
		t.Errorf("IsPublic(zero Addr) = true, want false")
	}
}

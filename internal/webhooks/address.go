package webhooks

import (
	"net/netip"

	"code.dny.dev/ssrf"
)

// guardian holds the deny lists of code.dny.dev/ssrf, generated from the IANA
// special-purpose registries: loopback, private, link-local, carrier-grade
// NAT, documentation, benchmarking, multicast and reserved IPv4 ranges, and
// every IPv6 address outside global unicast (2000::/3) or in a special range
// within it (2001::/23 with Teredo, 2001:db8::/32, 6to4 2002::/16, 3fff::/20).
// NAT64 (64:ff9b::/96, 64:ff9b:1::/48) lies outside global unicast, so it is
// refused whole, whatever IPv4 address it carries. Only its address check is
// used: ports and networks are the dialer's business.
var guardian = ssrf.New(ssrf.WithAnyNetwork(), ssrf.WithAnyPort())

// IsPublic reports whether a webhook may be delivered to a. The contract
// refuses an attempt when any address of the endpoint's host is not public.
//
// An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address
// it carries: net.Resolver.LookupNetIP can return A records in that form, and
// dialing one connects over IPv4. The library would refuse every mapped
// address and would pass the zero Addr, so both are handled here. An address
// with a zone is refused: zones name local links. The standard library's
// predicates are a second opinion on the library's tables.
func IsPublic(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	return guardian.SafeAddr(a) == nil
}

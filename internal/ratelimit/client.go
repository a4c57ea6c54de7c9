package ratelimit

import "net/netip"

// ClientSubject is the subject of a limit keyed on a client address (the
// lookup, public, sign-in, registration and portal limits): the whole
// address for IPv4, and for IPv6 its /64 network. One subscriber is
// usually given a whole /64 and can send from any of its 2⁶⁴ addresses,
// so counting each address apart would give them as many allowances. An
// IPv4 address written as IPv6 (::ffff:a.b.c.d) is the IPv4 address. A
// client address that does not parse is its own subject.
func ClientSubject(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return "addr:" + addr
	}
	a = a.Unmap()
	if a.Is4() {
		return "addr:" + a.String()
	}
	p, _ := a.Prefix(64)
	return "addr:" + p.String()
}

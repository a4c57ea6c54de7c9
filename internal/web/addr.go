package web

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr is the TCP peer, unless the peer is in trusted (a proxy): then
// X-Forwarded-For is read from the right and the first address that is not
// a trusted proxy is the client. Every front door counts its per-address
// limits by it.
func ClientAddr(r *http.Request, trusted []netip.Prefix) string {
	peer := peerAddr(r)
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	if !isTrusted(trusted, peer) {
		return peer.String()
	}
	client := peer
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				// An unparsable hop ends the walk: nothing left of it can be trusted.
				return client.String()
			}
			client = a.Unmap()
			if !isTrusted(trusted, client) {
				return client.String()
			}
		}
	}
	return client.String()
}

func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func isTrusted(trusted []netip.Prefix, a netip.Addr) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

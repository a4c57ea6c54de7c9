package console_test

import (
	"fmt"
	"net/http"
	"testing"
)

// Thirty failed sign-ins from thirty addresses of one IPv6 /64 use up the
// client address limit of that whole network: a subscriber holds the /64
// and may send from any address in it. The next /64 is counted apart.
func TestSignInLimitPerNetwork(t *testing.T) {
	onEngines(t, func(t *testing.T, o envOptions) {
		o.proxies = loopbackProxy
		e := newEnv(t, o)
		e.owner(t)
		for i := range 30 {
			_, a := e.signInFrom(t, fmt.Sprintf("2001:db8:1:2::%x", i+1), fmt.Sprintf("someone%d@acme.example", i), "wrong password")
			wantStatus(t, fmt.Sprintf("failure %d", i+1), a, http.StatusUnauthorized)
		}
		_, a := e.signInFrom(t, "2001:db8:1:2:ffff::1", "owner@acme.example", password)
		wantStatus(t, "right password from another address of the /64", a, http.StatusTooManyRequests)
		_, a = e.signInFrom(t, "2001:db8:1:3::1", "owner@acme.example", password)
		wantSeeOther(t, "right password from the next /64", a, "/console/")
	})
}
